package coercion

import "strings"

// repair fixes the lossless kinds of damage of docs/coercion.md (Raw argument
// text, rule 3) in text, which failed strict parsing, and returns the result
// with the offset in text where the fenced body starts (0 without a fence).
// It returns an error only for damage that must never be repaired, such as
// text that ends inside a string; otherwise the caller re-checks the result
// strictly, so repair may return text that is still invalid.
func repair(text string) ([]byte, int, *ParseError) {
	body, base := stripFence(text)
	out := make([]byte, 0, len(body)+8)
	var closers []byte // expected closing brackets, innermost last
	inString, escaped := false, false
	strStart := 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		if inString {
			switch {
			case escaped:
				escaped = false
				out = append(out, c)
			case c == '\\':
				escaped = true
				out = append(out, c)
			case c == '"':
				inString = false
				out = append(out, c)
			case c < 0x20:
				out = appendControlEscape(out, c)
			default:
				out = append(out, c)
			}
			continue
		}
		switch c {
		case '"':
			inString, strStart = true, i
		case '{':
			closers = append(closers, '}')
		case '[':
			closers = append(closers, ']')
		case '}', ']':
			out = dropTrailingComma(out)
			if n := len(closers); n > 0 && closers[n-1] == c {
				closers = closers[:n-1]
			}
		}
		out = append(out, c)
	}
	if inString {
		return nil, base, &ParseError{
			Offset: base + strStart,
			Msg:    "the text ends inside the string that starts here: the arguments look cut off",
		}
	}
	if len(closers) > 0 {
		// A completed block may end in a comma after a value ("[1, 2,"):
		// the comma is a trailing comma of rule 3, so it goes before the
		// closers are added.
		out = dropTrailingComma(out)
		// Close only after a complete value: text still ending in "{",
		// "[", "," or ":" lost something, and closing it would invent a
		// value (the classic failure: a truncated call run with empty
		// arguments).
		j := lastSignificant(out, len(out))
		if j < 0 || strings.IndexByte("{[,:", out[j]) >= 0 {
			return out, base, nil
		}
		for i := len(closers) - 1; i >= 0; i-- {
			out = append(out, closers[i])
		}
	}
	return out, base, nil
}

// stripFence removes a single code fence around the whole text (an optional
// language tag after the opening backticks) and returns the body with its
// offset in text. Text without exactly one surrounding fence is returned as is.
func stripFence(text string) (string, int) {
	const fence = "```"
	if len(text) < 2*len(fence) || !strings.HasPrefix(text, fence) || !strings.HasSuffix(text, fence) {
		return text, 0
	}
	inner := text[len(fence) : len(text)-len(fence)]
	if strings.Contains(inner, fence) {
		return text, 0
	}
	j := 0
	for j < len(inner) && isLangChar(inner[j]) {
		j++
	}
	if j < len(inner) && !isSpace(inner[j]) && inner[j] != '{' {
		return text, 0 // not a language tag: leave the text to fail strictly
	}
	for j < len(inner) && isSpace(inner[j]) {
		j++
	}
	return strings.TrimRight(inner[j:], " \t\r\n"), len(fence) + j
}

func isLangChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '+' || c == '.'
}

// dropTrailingComma removes a comma that ends out (ignoring whitespace) when
// it follows a value, so "[1,2,]" closes as "[1,2]" but "[,]" stays broken.
func dropTrailingComma(out []byte) []byte {
	j := lastSignificant(out, len(out))
	if j < 0 || out[j] != ',' {
		return out
	}
	k := lastSignificant(out, j)
	if k < 0 || strings.IndexByte("{[,:", out[k]) >= 0 {
		return out
	}
	return append(out[:j], out[j+1:]...)
}

// lastSignificant returns the index of the last non-whitespace byte of
// out[:end], or -1. Called outside strings only, where whitespace is
// insignificant.
func lastSignificant(out []byte, end int) int {
	for i := end - 1; i >= 0; i-- {
		if !isSpace(out[i]) {
			return i
		}
	}
	return -1
}

// appendControlEscape writes a raw control character found inside a string
// as the escape it should have been.
func appendControlEscape(out []byte, c byte) []byte {
	switch c {
	case '\n':
		return append(out, '\\', 'n')
	case '\r':
		return append(out, '\\', 'r')
	case '\t':
		return append(out, '\\', 't')
	case '\b':
		return append(out, '\\', 'b')
	case '\f':
		return append(out, '\\', 'f')
	default:
		return appendU(out, rune(c))
	}
}
