package sanitizer

import (
	"strings"
	"unicode/utf8"
)

const esc = 0x1b

// plainByte marks the bytes that are always kept as they are: printable
// ASCII, newline and tab.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = true
	}
	t['\n'], t['\t'] = true, true
	return t
}()

// stripInvisible removes what a reader cannot see but a model may still read
// (docs/coercion.md, Sanitizing errors, step 4): ANSI escape sequences (CSI,
// OSC and the other string and two-character forms), control characters other
// than newline and tab (C0, DEL, C1), zero-width characters, bidirectional
// controls and Unicode tag characters. Invalid UTF-8 becomes U+FFFD. Removing
// characters creates none of these, so one pass is a fixpoint.
func stripInvisible(s string) (string, bool) {
	var b strings.Builder
	changed := false
	kept := 0          // s[kept:i] is clean and not yet copied
	noTerminator := -1 // past this offset no string terminator exists
	for i := 0; i < len(s); {
		if plainByte[s[i]] {
			i++
			continue
		}
		c := s[i]
		var drop int      // bytes to remove at i
		replacement := "" // what replaces them
		switch {
		case c == esc:
			drop = escapeLen(s, i, &noTerminator)
		case c < utf8.RuneSelf:
			drop = 1 // C0 control or DEL
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				drop, replacement = 1, "\uFFFD"
			case r == 0x9b: // C1 CSI, the one-byte form of ESC [
				drop = size + csiBodyLen(s, i+size)
			case isInvisible(r):
				drop = size
			default:
				i += size
				continue
			}
		}
		if !changed {
			changed = true
			b.Grow(len(s))
		}
		b.WriteString(s[kept:i])
		b.WriteString(replacement)
		i += drop
		kept = i
	}
	if !changed {
		return s, false
	}
	b.WriteString(s[kept:])
	return b.String(), true
}

// isInvisible reports characters removed outside the ASCII range: C1
// controls, zero-width and bidirectional controls, and tag characters.
func isInvisible(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls
	case r >= 0x200b && r <= 0x200f: // zero-width space, joiners, LRM, RLM
	case r >= 0x202a && r <= 0x202e: // bidi embeddings and overrides
	case r >= 0x2060 && r <= 0x2064: // word joiner, invisible operators
	case r >= 0x2066 && r <= 0x2069: // bidi isolates
	case r == 0xfeff: // zero-width no-break space (BOM)
	case r == 0x061c: // Arabic letter mark, a bidi control
	case r == 0x180e: // Mongolian vowel separator, zero-width
	case r >= 0xfff9 && r <= 0xfffb: // interlinear annotation controls
	case r >= 0xe0000 && r <= 0xe007f: // tag characters: invisible ASCII
	default:
		return false
	}
	return true
}

// escapeLen returns the length of the escape sequence starting with ESC at
// s[i]. A sequence cut short loses what it has; an unknown one loses ESC.
func escapeLen(s string, i int, noTerminator *int) int {
	if i+1 >= len(s) {
		return 1
	}
	switch c := s[i+1]; {
	case c == '[': // CSI
		return 2 + csiBodyLen(s, i+2)
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		// OSC, DCS, SOS, PM, APC: a string ended by BEL or ESC \.
		if n := stringEnd(s, i+2, noTerminator); n >= 0 {
			return n - i
		}
		return 2
	case c >= 0x20 && c <= 0x2f: // nF: intermediates, then a final byte
		j := i + 1
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
			j++
		}
		return j - i
	case c >= 0x30 && c <= 0x7e: // two-character sequences (ESC 7, ESC c, ...)
		return 2
	default:
		return 1
	}
}

// csiBodyLen returns the length of a CSI's parameter, intermediate and final
// bytes starting at s[j].
func csiBodyLen(s string, j int) int {
	k := j
	for k < len(s) && s[k] >= 0x30 && s[k] <= 0x3f {
		k++
	}
	for k < len(s) && s[k] >= 0x20 && s[k] <= 0x2f {
		k++
	}
	if k < len(s) && s[k] >= 0x40 && s[k] <= 0x7e {
		k++
	}
	return k - j
}

// stringEnd returns the offset just past the BEL or ESC \ ending a control
// string whose body starts at s[j], or -1. A failed search is remembered,
// since no later string can find a terminator either: many unterminated
// strings cost one scan, not one each.
func stringEnd(s string, j int, noTerminator *int) int {
	if *noTerminator >= 0 && j >= *noTerminator {
		return -1
	}
	for k := j; k < len(s); k++ {
		switch {
		case s[k] == 0x07:
			return k + 1
		case s[k] == esc && k+1 < len(s) && s[k+1] == '\\':
			return k + 2
		}
	}
	*noTerminator = j
	return -1
}
