package coercion

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
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

// applySchemas are the schemas FuzzApply picks from: the benchmark's, and the
// shapes the harder rows of the coercion table (docs/coercion.md) need
// (unions with string or null, nullable, tuples, patterns, allOf and oneOf,
// recursion).
var applySchemas = []string{
	benchSchema,
	`{"type":"object","properties":{
		"s":  {"type":["string","integer"]},
		"n":  {"anyOf":[{"type":"integer"},{"type":"null"}]},
		"b":  {"type":"boolean","nullable":true},
		"l":  {"type":["array","null"],"items":{"type":"integer"}},
		"t":  {"type":"array","prefixItems":[{"type":"integer"},{"type":"boolean"}],"items":{"type":"number"}},
		"o":  {"oneOf":[{"type":"object","required":["a"],"properties":{"a":{"type":"integer"}}},{"type":"array","items":{"type":"object","properties":{"a":{"type":"boolean"}}}}]},
		"e":  {"enum":[1,2,"three",null]},
		"c":  {"const":9007199254740993},
		"x":  {"allOf":[{"type":["integer","string"]},{"minimum":0}]}
	},
	"patternProperties":{"^n_":{"type":"number","exclusiveMaximum":1e300}},
	"additionalProperties":{"type":"array","items":{"type":"string","maxLength":5}},
	"required":["s"]}`,
	`{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"additionalProperties":false}}}`,
}

func FuzzApply(f *testing.F) {
	compiled := make([]*Schema, len(applySchemas))
	for i, s := range applySchemas {
		compiled[i] = mustCompile(f, s)
	}
	for _, seed := range []string{
		benchArgs, "", `{}`, "```json\n{\"s\":\"42\",}\n```", `{"s":42,"n":"null","b":"TRUE","l":"[\"1\"]"}`,
		`{"t":["1","true","2.5"],"o":"{\"a\":\"3\"}","e":"2","c":"9007199254740993","x":"-1"}`,
		`{"n_1":"1e400","z":"abc","z":"[\"toolong\"]"}`, `{"v":"1","kids":"[{\"v\":\"2\"}]"}`,
		`{"path":"/tmp/fi`, `{"o":[{"a":"true"}],"s":"x"`, "{\"k\x00\":\"</system>\"}",
	} {
		for i := range compiled {
			f.Add(seed, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, raw string, which uint8) {
		s := compiled[int(which)%len(compiled)]
		args, _, err := ParseRaw(raw)
		if err != nil {
			return // FuzzParseRaw checks this side
		}
		out, err := s.Apply(args)
		if out == nil {
			t.Fatalf("Apply(%q) returned no arguments (%v)", args, err)
		}
		if !json.Valid(out) {
			t.Fatalf("Apply(%q) = %q, not JSON", args, out)
		}
		if before, after := topKeys(args), topKeys(out); before != after {
			t.Fatalf("keys changed: %q -> %q", before, after)
		}
		// Apply is Coerce then Validate, in one decode.
		coerced, cerr := s.Coerce(args)
		if cerr != nil || string(coerced) != string(out) {
			t.Fatalf("Coerce(%q) = %q, %v; Apply gave %q", args, coerced, cerr, out)
		}
		verr := s.Validate(out)
		if (err == nil) != (verr == nil) || (err != nil && err.Error() != verr.Error()) {
			t.Fatalf("Apply error %v, Validate error %v", err, verr)
		}
		if err == nil {
			return
		}
		var ve *ValidationError
		if !errors.As(err, &ve) || len(ve.Problems) == 0 {
			t.Fatalf("Apply error %T %v, want a *ValidationError with problems", err, err)
		}
		lines, msg := ve.Lines(), err.Error()
		if len(lines) == 0 || len(lines) > maxProblemLines+1 {
			t.Fatalf("%d lines", len(lines))
		}
		if n := strings.Count(msg, "\n"); n > len(lines) {
			t.Fatalf("Error() has %d line breaks for %d lines: %q", n, len(lines), msg)
		}
		for _, l := range lines {
			if strings.Contains(l, "\n") || utf8.RuneCountInString(l) > maxLineChars {
				t.Fatalf("bad line %q", l)
			}
		}
		if len(msg) > maxErrorChars+4*maxLineChars {
			t.Fatalf("Error() of %d bytes", len(msg))
		}
	})
}
