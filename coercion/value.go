package coercion

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// kind is the JSON type of a value.
type kind uint8

const (
	kNull kind = iota
	kBool
	kNumber
	kString
	kArray
	kObject
)

// value is a decoded JSON value that, unlike map[string]any, keeps member
// order and duplicate keys (coercion must neither add nor remove keys) and
// keeps numbers as their literal text (so no digit is ever lost).
type value struct {
	kind kind
	b    bool
	s    string // a string's content, or a number's literal
	arr  []value
	obj  []member
}

type member struct {
	key string
	val value
}

var errMalformed = errors.New("malformed JSON")

// decodeJSON parses one complete JSON document strictly (RFC 8259).
func decodeJSON(data []byte) (value, error) {
	if !json.Valid(data) {
		var raw json.RawMessage
		err := json.Unmarshal(data, &raw)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset counts the bytes read, the offending one included;
			// point at that byte instead.
			off, msg := int(se.Offset), se.Error()
			switch rest, atEnd := strings.CutPrefix(msg, "invalid character ' ' "); {
			case atEnd && off >= len(data) && (len(data) == 0 || data[len(data)-1] != ' '):
				// The scanner checks the end of the text by feeding it a
				// space; inside a literal or a number that space is what
				// it blames. Say what happened: the text stops there.
				msg = "unexpected end of JSON input " + rest
				off = len(data)
			case off > 0 && strings.HasPrefix(msg, "invalid character"):
				off--
			}
			return value{}, &ParseError{Offset: off, Msg: msg}
		}
		return value{}, &ParseError{Offset: 0, Msg: "invalid JSON"}
	}
	p := parser{data: data}
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		// json.Valid accepted the text, so this is a bug in the parser; it is
		// still reported as an error rather than a panic.
		return value{}, &ParseError{Offset: p.pos, Msg: err.Error()}
	}
	return v, nil
}

// parser walks text that json.Valid has accepted; it still checks bounds so
// that a disagreement with json.Valid is an error, never a panic.
type parser struct {
	data []byte
	pos  int
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (value, error) {
	if p.pos >= len(p.data) {
		return value{}, errMalformed
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.str()
		return value{kind: kString, s: s}, err
	case c == 't':
		return value{kind: kBool, b: true}, p.literal("true")
	case c == 'f':
		return value{kind: kBool}, p.literal("false")
	case c == 'n':
		return value{kind: kNull}, p.literal("null")
	default:
		start := p.pos
		for p.pos < len(p.data) {
			c := p.data[p.pos]
			if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
				break
			}
			p.pos++
		}
		if p.pos == start {
			return value{}, errMalformed
		}
		return value{kind: kNumber, s: string(p.data[start:p.pos])}, nil
	}
}

func (p *parser) literal(lit string) error {
	if len(p.data)-p.pos < len(lit) || string(p.data[p.pos:p.pos+len(lit)]) != lit {
		return errMalformed
	}
	p.pos += len(lit)
	return nil
}

func (p *parser) object() (value, error) {
	v := value{kind: kObject}
	p.pos++ // '{'
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	for {
		p.skipSpace()
		key, err := p.str()
		if err != nil {
			return v, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return v, errMalformed
		}
		p.pos++
		p.skipSpace()
		el, err := p.value()
		if err != nil {
			return v, err
		}
		v.obj = append(v.obj, member{key: key, val: el})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return v, errMalformed
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return v, nil
		default:
			return v, errMalformed
		}
	}
}

func (p *parser) array() (value, error) {
	v := value{kind: kArray}
	p.pos++ // '['
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		v.arr = []value{}
		return v, nil
	}
	for {
		p.skipSpace()
		el, err := p.value()
		if err != nil {
			return v, err
		}
		v.arr = append(v.arr, el)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return v, errMalformed
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return v, nil
		default:
			return v, errMalformed
		}
	}
}

// str decodes a JSON string the way encoding/json does: invalid UTF-8 and
// lone surrogates become U+FFFD.
func (p *parser) str() (string, error) {
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return "", errMalformed
	}
	p.pos++
	start := p.pos
	// Fast path: no escapes and valid UTF-8, the common case.
	for i := start; i < len(p.data); i++ {
		c := p.data[i]
		if c == '"' {
			if utf8.Valid(p.data[start:i]) {
				p.pos = i + 1
				return string(p.data[start:i]), nil
			}
			break
		}
		if c == '\\' {
			break
		}
	}
	buf := make([]byte, 0, 16)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c == '\\':
			if p.pos+1 >= len(p.data) {
				return "", errMalformed
			}
			e := p.data[p.pos+1]
			p.pos += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", errMalformed
				}
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
						save := p.pos
						p.pos += 2
						if x, ok := p.hex4(); ok {
							r2 = x
						} else {
							p.pos = save
						}
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							buf = utf8.AppendRune(buf, dec)
							continue
						}
						p.pos = save
					}
					r = utf8.RuneError
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", errMalformed
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			buf = utf8.AppendRune(buf, r)
			p.pos += size
		}
	}
	return "", errMalformed
}

func (p *parser) hex4() (rune, bool) {
	if len(p.data)-p.pos < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.pos += 4
	return rune(n), true
}
