package coercion_test

import (
	"encoding/json"
	"fmt"

	"github.com/toolwire/toolwire/coercion"
)

// A model sent every value as a string. Coerce converts each to the type
// its property accepts, keeping every digit; Validate then checks the
// whole schema and reports what coercion could not fix, worded for the
// model.
func Example() {
	schema, err := coercion.Compile(json.RawMessage(`{
		"type": "object",
		"properties": {
			"file_path": {"type": "string"},
			"offset":    {"type": "integer"},
			"limit":     {"type": "integer", "maximum": 2000},
			"follow":    {"type": "boolean"},
			"tags":      {"type": "array", "items": {"type": "string"}}
		},
		"required": ["file_path"]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	args, err := schema.Apply(json.RawMessage(`{"file_path":"log.txt","offset":"9007199254740993","limit":"5000","follow":"TRUE","tags":"errors"}`))
	fmt.Println(string(args))
	fmt.Println(err)
	// Output:
	// {"file_path":"log.txt","offset":9007199254740993,"limit":5000,"follow":true,"tags":["errors"]}
	// input is invalid:
	// - /limit: expected a number <= 2000, got integer 5000
}

// ParseRaw turns a completed call's raw argument text into an object,
// repairing only what loses no information, here a trailing comma and a
// missing closing brace; text cut inside a string is never closed up.
func ExampleParseRaw() {
	args, repaired, err := coercion.ParseRaw(`{"command": "ls -la",`)
	fmt.Println(string(args), repaired, err)

	_, _, err = coercion.ParseRaw(`{"command": "ls -l`)
	fmt.Println(err)
	// Output:
	// {"command": "ls -la"} true <nil>
	// invalid arguments at offset 12: the text ends inside the string that starts here: the arguments look cut off
}
