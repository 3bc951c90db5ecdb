package coercion

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseRaw(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     string
		repaired bool
	}{
		{"empty", "", `{}`, false},
		{"whitespace only", " \n\t ", `{}`, false},
		{"strict object", `{"a":1}`, `{"a":1}`, false},
		{"strict with surrounding space", "  {\"a\": [1, 2]}\n", `{"a": [1, 2]}`, false},
		{"big integer kept verbatim", `{"n":9007199254740993}`, `{"n":9007199254740993}`, false},
		{"fence with language", "```json\n{\"a\":1}\n```", `{"a":1}`, true},
		{"fence without language", "```\n{\"a\":1}\n```", `{"a":1}`, true},
		{"fence on one line", "```{\"a\":1}```", `{"a":1}`, true},
		{"trailing comma in object", `{"a":1,}`, `{"a":1}`, true},
		{"trailing comma in array", `{"a":[1,2, ]}`, `{"a":[1,2 ]}`, true},
		{"trailing commas nested", `{"a":{"b":[1,],},}`, `{"a":{"b":[1]}}`, true},
		{"comma inside a string kept", `{"a":",]",}`, `{"a":",]"}`, true},
		{"raw newline in string", "{\"a\":\"x\ny\"}", `{"a":"x\ny"}`, true},
		{"raw tab and NUL in string", "{\"a\":\"x\ty\x00\"}", `{"a":"x\ty\u0000"}`, true},
		{"missing closing brace", `{"a":1`, `{"a":1}`, true},
		{"missing closers nested", `{"a":{"b":[1,2]`, `{"a":{"b":[1,2]}}`, true},
		{"missing closer after string", `{"a":"x"`, `{"a":"x"}`, true},
		{"fence plus repair", "```json\n{\"a\":[1,],\n```", "", false}, // ends in a comma: not closed
		{"fence and missing closer", "```json\n{\"a\":[1]\n```", `{"a":[1]}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, repaired, err := ParseRaw(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("ParseRaw(%q) = %s, want error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRaw(%q): %v", tt.in, err)
			}
			if string(got) != tt.want || repaired != tt.repaired {
				t.Errorf("ParseRaw(%q) = %s, %v; want %s, %v", tt.in, got, repaired, tt.want, tt.repaired)
			}
		})
	}
}

func TestParseRawRejects(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		offset int
	}{
		// Cut inside a string: never repaired, never {}; the offset is
		// where the unterminated string starts.
		{"cut inside a value string", `{"path":"/tmp/fi`, 8},
		{"cut inside a key", `{"pa`, 1},
		{"cut inside a string after fence", "```json\n{\"a\":\"x\n```", 13},
		{"cut after a colon", `{"a":`, 5},
		{"cut after a comma", `{"a":1,`, 7},
		{"lone brace", `{`, 1},
		{"top-level array", `[1,2]`, 0},
		{"top-level string", `"x"`, 0},
		{"top-level null", `null`, 0},
		{"garbage", `hello`, 0},
		{"trailing garbage", `{"a":1} x`, 8},
		{"mismatched closer", `{"a":[1}`, 7},
		{"empty member", `{"a":1,,"b":2}`, 7},
		{"two fences", "```\n{}\n```\n```\n{}\n```", 0},
		{"single quotes", `{'a':1}`, 1},
		{"fenced array", "```json\n[1]\n```", 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, repaired, err := ParseRaw(tt.in)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseRaw(%q) = %s, %v, %v; want *ParseError", tt.in, got, repaired, err)
			}
			if got != nil || repaired {
				t.Errorf("ParseRaw(%q) returned args %s with its error", tt.in, got)
			}
			if pe.Offset != tt.offset {
				t.Errorf("ParseRaw(%q) offset = %d, want %d (%v)", tt.in, pe.Offset, tt.offset, pe)
			}
		})
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, _, err := ParseRaw(`{"path":"/tmp/fi`)
	want := "invalid arguments at offset 8: the text ends inside the string that starts here: the arguments look cut off"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

// TestHugeInputs checks that big or deeply nested input is handled in
// bounded time and memory and is rejected, not crashed on.
func TestHugeInputs(t *testing.T) {
	deep := strings.Repeat("[", 100000)
	if _, _, err := ParseRaw(`{"a":` + deep); err == nil {
		t.Error("ParseRaw accepted 100000 unclosed brackets")
	}
	s := mustCompile(t, `{"$ref":"#/$defs/a","$defs":{"a":{"type":["array","object","integer"],"items":{"$ref":"#/$defs/a"},"additionalProperties":{"$ref":"#/$defs/a"}}}}`)
	nested := strings.Repeat(`{"a":[`, 4000) + `"1"` + strings.Repeat(`]}`, 4000)
	out, err := s.Coerce(json.RawMessage(nested))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat(`{"a":[`, 4000) + `1` + strings.Repeat(`]}`, 4000); string(out) != want {
		t.Error("deeply nested value not coerced")
	}
	long := `{"n":"` + strings.Repeat("9", 1<<20) + `"}`
	s = mustCompile(t, `{"properties":{"n":{"type":"integer"}}}`)
	if out, err := s.Coerce(json.RawMessage(long)); err != nil || string(out) != long {
		t.Error("a million-digit integer (beyond float64 range) must stay a string")
	}
}
