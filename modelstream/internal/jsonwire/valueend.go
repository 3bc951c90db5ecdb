package jsonwire

import "bytes"

// ValueEnd follows a JSON text fed in pieces just far enough to see where
// its first top-level value ends. Formats that stream a call's arguments
// without a per-call end event (OpenAI Chat Completions) use it: a call is
// complete the moment the top-level value of its arguments closes, whatever
// the stream does next. It does not validate: the whole text is parsed once
// the value has closed, and a malformed text is reported then. Its state is
// a few integers, however long the text.
//
// The zero value is ready for a new text.
type ValueEnd struct {
	state valueState
	// depth counts the objects and arrays open; it only grows with input.
	depth int
}

type valueState uint8

const (
	valueBefore valueState = iota // only white space so far
	valueNested                   // inside an object or array, outside any string
	valueString                   // inside a string
	valueEscape                   // inside a string, just after a backslash
	valueScalar                   // inside a top-level number or literal
	valueClosed                   // the value has ended
)

// Feed scans the next piece of the text, unescaped, and reports whether the
// value has closed, in this piece or before. The bytes after the one that
// closed it are not looked at: they are the caller's to judge.
func (v *ValueEnd) Feed(p []byte) (closed bool) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch v.state {
		case valueClosed:
			return true
		case valueBefore:
			switch {
			case isSpace(c):
			case c == '{' || c == '[':
				v.state, v.depth = valueNested, 1
			case c == '"':
				v.state = valueString
			default:
				v.state = valueScalar
			}
		case valueNested:
			switch c {
			case '{', '[':
				v.depth++
			case '}', ']':
				if v.depth--; v.depth == 0 {
					v.state = valueClosed
				}
			case '"':
				v.state = valueString
			}
		case valueString:
			// Most of a long text is string content: jump to what may end it.
			j := bytes.IndexAny(p[i:], `"\\`)
			if j < 0 {
				return false
			}
			i += j
			c = p[i]
			switch c {
			case '\\':
				v.state = valueEscape
			case '"':
				v.state = valueNested
				if v.depth == 0 {
					v.state = valueClosed
				}
			}
		case valueEscape:
			// The escaped byte never ends the string; \uXXXX is four plain bytes more.
			v.state = valueString
		case valueScalar:
			// A number or literal ends at the first byte that cannot continue it.
			if isSpace(c) || isDelimiter(c) {
				v.state = valueClosed
			}
		}
	}
	return v.state == valueClosed
}

// Started reports whether any byte of the value has been fed.
func (v *ValueEnd) Started() bool { return v.state != valueBefore }

// Closed reports whether the value has ended.
func (v *ValueEnd) Closed() bool { return v.state == valueClosed }

// Blank reports whether b is all JSON white space (or empty).
func Blank(b []byte) bool {
	for _, c := range b {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDelimiter(c byte) bool {
	switch c {
	case '{', '}', '[', ']', ',', ':', '"':
		return true
	}
	return false
}
