package coercion

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// appendValue writes v as compact JSON. With canonical set, object keys are
// sorted by code point (stable, so duplicate keys keep their order) and every
// non-ASCII character is escaped.
func appendValue(dst []byte, v *value, canonical bool) []byte {
	switch v.kind {
	case kNull:
		return append(dst, "null"...)
	case kBool:
		if v.b {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case kNumber:
		return append(dst, v.s...)
	case kString:
		return appendString(dst, v.s, canonical)
	case kArray:
		dst = append(dst, '[')
		for i := range v.arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, &v.arr[i], canonical)
		}
		return append(dst, ']')
	default:
		members := v.obj
		if canonical && len(members) > 1 {
			// Go compares strings bytewise, and UTF-8 byte order is code
			// point order.
			members = slices.Clone(members)
			slices.SortStableFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
		}
		dst = append(dst, '{')
		for i := range members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, members[i].key, canonical)
			dst = append(dst, ':')
			dst = appendValue(dst, &members[i].val, canonical)
		}
		return append(dst, '}')
	}
}

// appendString writes s as a JSON string. HTML characters are not escaped
// (the text is for a model, not a browser); invalid UTF-8 becomes U+FFFD.
func appendString(dst []byte, s string, asciiOnly bool) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c >= 0x20:
				dst = append(dst, c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = appendU(dst, rune(c))
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case !asciiOnly && r != utf8.RuneError:
			dst = append(dst, s[i-size:i]...)
		case !asciiOnly:
			dst = append(dst, "\ufffd"...)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			dst = appendU(appendU(dst, r1), r2)
		default:
			dst = appendU(dst, r)
		}
	}
	return append(dst, '"')
}

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xF], hexDigits[r>>8&0xF], hexDigits[r>>4&0xF], hexDigits[r&0xF])
}

// Canonical returns args as compact JSON with keys sorted by code point and
// non-ASCII escaped, for byte-stable echoes.
func Canonical(args json.RawMessage) (json.RawMessage, error) {
	// Number literals are kept as written: rewriting them could lose
	// digits. Escapes above U+FFFF are surrogate pairs, as JSON requires.
	v, err := decodeJSON(args)
	if err != nil {
		return nil, err
	}
	return appendValue(make([]byte, 0, len(args)), &v, true), nil
}
