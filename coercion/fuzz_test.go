package coercion

import (
	"encoding/json"
	"errors"
	"testing"
)

func FuzzParseRaw(f *testing.F) {
	for _, seed := range []string{
		"", "{}", `{"a":1}`, `{"a":1,}`, "```json\n{\"a\":[1,2,]}\n```",
		`{"a":"x`, `{"a":{"b":1`, "{\"a\":\"x\ny\"}", `[1]`, `{`, `{"a":1,`,
		`{"n":9007199254740993}`, `{"a":"\ud83d\ude00"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		args, repaired, err := ParseRaw(text)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			if args != nil || repaired {
				t.Fatalf("args %q returned with an error", args)
			}
			if pe.Offset < 0 || pe.Offset > len(text) {
				t.Fatalf("offset %d outside text of %d bytes", pe.Offset, len(text))
			}
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(args, &obj); err != nil {
			t.Fatalf("ParseRaw(%q) = %q, not a JSON object: %v", text, args, err)
		}
		if !repaired && len(obj) == 0 && string(args) == "{}" {
			for _, c := range text {
				if c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '{' && c != '}' {
					t.Fatalf("ParseRaw(%q) = {} for text with content", text)
				}
			}
		}
		if _, err := Canonical(args); err != nil {
			t.Fatalf("Canonical(%q): %v", args, err)
		}
	})
}

func FuzzCoerce(f *testing.F) {
	schemas := []string{
		benchSchema,
		`{"$ref":"#/$defs/n","$defs":{"n":{"type":["object","string","null"],"properties":{"v":{"type":["integer","array"],"items":{"$ref":"#/$defs/n"}}},"additionalProperties":{"anyOf":[{"type":"number"},{"type":"boolean"},{"$ref":"#/$defs/n"}]}}}}`,
	}
	compiled := make([]*Schema, len(schemas))
	for i, s := range schemas {
		compiled[i] = mustCompile(f, s)
	}
	for _, seed := range []string{
		benchArgs, `{}`, `{"v":"1"}`, `{"v":["1",{"v":"2"}]}`, `{"x":"true","y":"1e3"}`,
		`{"offset":"9007199254740993"}`, `{"v":"[\"[1]\"]"}`, `{"globs":5}`,
	} {
		f.Add(seed, uint8(0))
		f.Add(seed, uint8(1))
	}
	f.Fuzz(func(t *testing.T, args string, which uint8) {
		s := compiled[int(which)%len(compiled)]
		out, err := s.Coerce(json.RawMessage(args))
		if err != nil {
			if json.Valid([]byte(args)) {
				t.Fatalf("Coerce rejected valid JSON %q: %v", args, err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("Coerce(%q) = %q, not JSON", args, out)
		}
		// Coercion is a fixpoint: coercing its output changes nothing
		// more, and the keys at the top stay the same.
		again, err := s.Coerce(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("Coerce not idempotent on %q: %q then %q (%v)", args, out, again, err)
		}
		before, after := topKeys(json.RawMessage(args)), topKeys(out)
		if before != after {
			t.Fatalf("keys changed: %q -> %q", before, after)
		}
		var ve *ValidationError
		if err := s.Validate(out); err != nil && !errors.As(err, &ve) {
			t.Fatalf("Validate error %T", err)
		}
	})
}

// topKeys lists an object's keys in order (duplicates included).
func topKeys(data json.RawMessage) string {
	v, err := decodeJSON(data)
	if err != nil || v.kind != kObject {
		return ""
	}
	keys := ""
	for _, m := range v.obj {
		keys += m.key + "\x00"
	}
	return keys
}
