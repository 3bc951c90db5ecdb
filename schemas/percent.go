package schemas

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// percentEncode applies the NATS binding's header rule: space, '"', '%' and
// every byte outside U+0021–U+007E are written as %XX of their UTF-8 bytes.
// sdk-go does not do this itself.
func percentEncode(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if needsEscape(s[i]) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsEscape(c) {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func needsEscape(c byte) bool { return c <= 0x20 || c >= 0x7F || c == '"' || c == '%' }

// percentDecode reverses percentEncode; a malformed escape is an error, and
// so is a result that is not UTF-8, since CloudEvents attributes are Unicode
// strings and %FF would otherwise reach logs and subjects as a broken one.
func percentDecode(s string) (string, error) {
	if !strings.Contains(s, "%") {
		if err := checkUTF8(s); err != nil {
			return "", err
		}
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("truncated escape at byte %d", i)
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("bad escape %q at byte %d", s[i:i+3], i)
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	out := b.String()
	if err := checkUTF8(out); err != nil {
		return "", err
	}
	return out, nil
}

func checkUTF8(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("not UTF-8")
	}
	return nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
