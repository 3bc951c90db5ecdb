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
		{"fence plus repair", "```json\n{\"a\":[1,],\n```", `{"a":[1]}`, true},
		{"trailing comma and missing closers", `{"a": [1, 2,`, `{"a": [1, 2]}`, true},
		{"trailing comma after a member, brace missing", `{"a":1, `, `{"a":1}`, true},
		{"trailing comma after a closed array", `{"a":[1],`, `{"a":[1]}`, true},
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
		{"comma after an opening brace", `{,`, 1},
		{"comma after an opening bracket", `{"a":[,`, 6},
		{"comma after a colon", `{"a":,`, 5},
		{"two trailing commas", `{"a":1,,`, 7},
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
		{"cut inside an escape", `{"a":"x\`, 5},
		{"cut inside a \\u escape", `{"a":"\u00`, 5},
		{"cut inside a key after a member", `{"a":1,"b`, 7},
		{"cut inside a literal", `{"a":tru`, 8},
		{"cut after a minus", `{"a":-`, 6},
		{"cut after an exponent", `{"a":1e`, 7},
		{"cut after a key", `{"a"`, 4},
		{"cut inside a string in an array", `{"a":["x","y`, 10},
		{"not closed by a fence", "```json\n{\"a\":\"x\"\n", 0},
		{"block of whitespace then garbage", " \n x", 3},
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
	for in, want := range map[string]string{
		`{"path":"/tmp/fi`: "invalid arguments at offset 8: the text ends inside the string that starts here: the arguments look cut off",
		// encoding/json blames a space it feeds itself at the end.
		`{"a":tru`: "invalid arguments at offset 8: unexpected end of JSON input in literal true (expecting 'e')",
		`{"a":1.`:  "invalid arguments at offset 7: unexpected end of JSON input after decimal point in numeric literal",
		`{"a":`:    "invalid arguments at offset 5: unexpected end of JSON input",
		`{"a":x}`:  "invalid arguments at offset 5: invalid character 'x' looking for beginning of value",
		`{"a":1 x`: "invalid arguments at offset 7: invalid character 'x' after object key:value pair",
	} {
		if _, _, err := ParseRaw(in); err == nil || err.Error() != want {
			t.Errorf("ParseRaw(%q) error = %v\nwant %q", in, err, want)
		}
	}
}

// TestParseRawTruncations cuts a real argument text at every byte
// (docs/coercion.md, Raw argument text, rule 4): a cut inside a string is
// always rejected, and no cut ever gives {}.
func TestParseRawTruncations(t *testing.T) {
	const full = `{"path": "/tmp/a b.txt", "old": "say \"hi\"\\n", "lines": [1, 22, {"x": "y"}], "ok": true, "n": null}`
	inString, escaped := false, false
	for i := 0; i <= len(full); i++ {
		text := full[:i]
		got, repaired, err := ParseRaw(text)
		switch {
		case i == 0:
			if err != nil || string(got) != `{}` || repaired {
				t.Errorf("ParseRaw(%q) = %s, %v, %v; want {}", text, got, repaired, err)
			}
		case inString:
			var pe *ParseError
			if !errors.As(err, &pe) || got != nil {
				t.Errorf("ParseRaw(%q) = %s, %v; a cut inside a string must be rejected", text, got, err)
			}
		case err == nil:
			if string(got) == `{}` {
				t.Errorf("ParseRaw(%q) = {}", text)
			}
			if !repaired && i != len(full) {
				t.Errorf("ParseRaw(%q) = %s, not marked repaired", text, got)
			}
			if !json.Valid(got) {
				t.Errorf("ParseRaw(%q) = %s, not JSON", text, got)
			}
		}
		if i < len(full) {
			switch c := full[i]; {
			case escaped:
				escaped = false
			case inString && c == '\\':
				escaped = true
			case c == '"':
				inString = !inString
			}
		}
	}
	if inString {
		t.Fatal("bad test text")
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
