package jsonwire

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestValueEnd(t *testing.T) {
	for _, tt := range []struct {
		text string
		// closeAt is the length of the shortest prefix after which the value
		// has closed; -1: it never closes.
		closeAt int
	}{
		{``, -1},
		{"  \n\t", -1},
		{`{}`, 2},
		{` {"a":1} `, 8},
		{`{"a":{"b":[1,{"c":"}]"}]}}`, 26},
		{`{"s":"\"}\\"}`, 13},
		{`{"s":"\u007d"}`, 14},
		{`{"a":1`, -1},
		{`[1,[2]]x`, 7},
		{`"x}"`, 4},
		{`"\""`, 4},
		{`123`, -1},
		{`123 `, 4},
		{`true,`, 5},
		{`}`, -1},
		{`{]`, 2},
		{`{} {}`, 2},
	} {
		var v ValueEnd
		at := -1
		for i := range len(tt.text) {
			if v.Feed([]byte{tt.text[i]}) {
				at = i + 1
				break
			}
		}
		if at != tt.closeAt {
			t.Errorf("%q: closed after %d bytes, want %d", tt.text, at, tt.closeAt)
		}
		var whole ValueEnd
		if got := whole.Feed([]byte(tt.text)); got != (tt.closeAt >= 0) || whole.Closed() != got {
			t.Errorf("%q fed whole: closed %v, want %v", tt.text, got, tt.closeAt >= 0)
		}
		if whole.Started() != !Blank([]byte(tt.text)) {
			t.Errorf("%q: Started %v", tt.text, whole.Started())
		}
	}
}

// FuzzValueEnd checks ValueEnd against encoding/json: a valid object, array
// or string closes at its last byte and not a byte before, however the text
// is cut into pieces.
func FuzzValueEnd(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		var v ValueEnd
		n := max(int(step), 1)
		closedAt := -1
		for i := 0; i < len(data); i += n {
			if v.Feed(data[i:min(i+n, len(data))]) {
				closedAt = i
				break
			}
		}
		trimmed := bytes.TrimLeft(data, " \t\r\n")
		if len(trimmed) == 0 || !json.Valid(data) || !bytes.ContainsAny(trimmed[:1], `{["`) {
			return // anything goes, but no panic
		}
		end := len(bytes.TrimRight(data, " \t\r\n")) // the value's last byte is end-1
		if closedAt < 0 || closedAt > end-1 || closedAt+n <= end-1 {
			t.Fatalf("%q in pieces of %d: closed in the piece at %d, want the one holding byte %d", data, n, closedAt, end-1)
		}
	})
}

func TestBlank(t *testing.T) {
	for s, want := range map[string]bool{"": true, " \t\r\n": true, " x": false, "\u00a0": false} {
		if Blank([]byte(s)) != want {
			t.Errorf("Blank(%q) = %v", s, !want)
		}
	}
}
