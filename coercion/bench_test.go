package coercion

import (
	"encoding/json"
	"testing"
)

// benchSchema is a typical tool schema of ten properties.
const benchSchema = `{
	"type": "object",
	"properties": {
		"path":       {"type": "string", "description": "file to edit"},
		"old_string": {"type": "string"},
		"new_string": {"type": "string"},
		"replace_all":{"type": "boolean"},
		"offset":     {"type": "integer", "minimum": 0},
		"limit":      {"anyOf": [{"type": "integer"}, {"type": "null"}]},
		"timeout":    {"type": "number"},
		"globs":      {"type": "array", "items": {"type": "string"}},
		"mode":       {"enum": ["fast", "safe"]},
		"options":    {"type": "object", "properties": {"depth": {"type": "integer"}}}
	},
	"required": ["path", "old_string", "new_string"],
	"additionalProperties": false
}`

// benchArgs has the usual mistakes: numbers and booleans as strings, a
// single glob instead of a list, an object as a JSON string.
const benchArgs = `{"path":"/home/user/project/src/main.go","old_string":"func main() {\n\tfmt.Println(\"hi\")\n}","new_string":"func main() {\n\tfmt.Println(\"hello\")\n}","replace_all":"false","offset":"10","limit":"200","timeout":"2.5","globs":"*.go","mode":"safe","options":"{\"depth\":\"3\"}"}`

func BenchmarkApply10Props(b *testing.B) {
	s := mustCompile(b, benchSchema)
	args := json.RawMessage(benchArgs)
	if _, err := s.Apply(args); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(args)))
	for b.Loop() {
		if _, err := s.Apply(args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCoerce10Props is coercion alone, without validation.
func BenchmarkCoerce10Props(b *testing.B) {
	s := mustCompile(b, benchSchema)
	args := json.RawMessage(benchArgs)
	b.SetBytes(int64(len(args)))
	for b.Loop() {
		if _, err := s.Coerce(args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCoerceThenValidate10Props(b *testing.B) {
	s := mustCompile(b, benchSchema)
	args := json.RawMessage(benchArgs)
	for b.Loop() {
		out, err := s.Coerce(args)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Validate(out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseRaw(b *testing.B) {
	text := benchArgs
	for b.Loop() {
		if _, _, err := ParseRaw(text); err != nil {
			b.Fatal(err)
		}
	}
}
