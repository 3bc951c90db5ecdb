package coercion

import (
	"encoding/json"
	"testing"
)

// propSchema compiles an object schema with one property "v".
func propSchema(t testing.TB, prop string) *Schema {
	t.Helper()
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"v":` + prop + `}}`))
	if err != nil {
		t.Fatalf("Compile(%s): %v", prop, err)
	}
	return s
}

// TestCoerceTable covers every row of the coercion table in docs/coercion.md,
// plus the harder cases.
func TestCoerceTable(t *testing.T) {
	tests := []struct {
		row, schema, in, want string
	}{
		// null, checked first
		{"null", `{"type":"null"}`, `"null"`, `null`},
		{"null", `{"type":"null"}`, `" NULL "`, `null`},
		{"null", `{"type":["string","null"]}`, `"null"`, `null`},
		{"null", `{"type":"string","nullable":true}`, `"Null"`, `null`},
		{"null", `{"anyOf":[{"type":"string"},{"type":"null"}]}`, `"null"`, `null`},
		{"null", `{"oneOf":[{"type":"integer"},{"type":"null"}]}`, `"null"`, `null`},
		{"null", `{"type":"string"}`, `"null"`, `"null"`},
		{"null", `{"type":["null","integer"]}`, `"7"`, `7`},
		// checked first: before wrapping, parsing or keeping a string
		{"null", `{"type":["array","null"]}`, `"null"`, `null`},
		{"null", `{"type":["boolean","null"]}`, `"NULL"`, `null`},
		{"null", `{"type":"integer","nullable":true}`, `" null "`, `null`},
		{"null", `{"anyOf":[{"type":"integer"},{"type":"null"}]}`, `"null"`, `null`},
		{"null", `{"type":"integer"}`, `"null"`, `"null"`},

		// integer, exactly
		{"integer", `{"type":"integer"}`, `"42"`, `42`},
		{"integer", `{"type":"integer"}`, `" 42 "`, `42`},
		{"integer", `{"type":"integer"}`, `"+42"`, `42`},
		{"integer", `{"type":"integer"}`, `"-42"`, `-42`},
		{"integer", `{"type":"integer"}`, `"3.0"`, `3`},
		{"integer", `{"type":"integer"}`, `"1e3"`, `1000`},
		{"integer", `{"type":"integer"}`, `"2.5E1"`, `25`},
		{"integer", `{"type":"integer"}`, `"-0"`, `0`},
		{"integer", `{"type":"integer"}`, `"007"`, `7`},
		{"integer", `{"type":"integer"}`, `"9007199254740993"`, `9007199254740993`},
		{"integer", `{"type":"integer"}`, `"-9223372036854775809"`, `-9223372036854775809`},
		{"integer", `{"type":"integer"}`, `"123456789012345678901234567890"`, `123456789012345678901234567890`},
		{"integer", `{"type":"integer"}`, `"3.5"`, `"3.5"`},
		{"integer", `{"type":"integer"}`, `"inf"`, `"inf"`},
		{"integer", `{"type":"integer"}`, `"nan"`, `"nan"`},
		{"integer", `{"type":"integer"}`, `"1e400"`, `"1e400"`},
		{"integer", `{"type":"integer"}`, `"abc"`, `"abc"`},
		{"integer", `{"type":"integer"}`, `""`, `""`},
		{"integer", `{"type":"integer"}`, `"0x10"`, `"0x10"`},
		{"integer", `{"type":"integer"}`, `"1_000"`, `"1_000"`},
		{"integer", `{"type":"integer"}`, `"4 2"`, `"4 2"`},
		{"integer", `{"type":"integer"}`, `"1e99999999999999999999"`, `"1e99999999999999999999"`},
		{"integer", `{"type":"integer"}`, `3.0`, `3.0`}, // not a string: stays
		{"integer", `{"type":"integer"}`, `"-9007199254740993"`, `-9007199254740993`},
		{"integer", `{"type":"integer"}`, `"18446744073709551617"`, `18446744073709551617`},
		{"integer", `{"type":"integer"}`, `"9007199254740993.000"`, `9007199254740993`},
		{"integer", `{"type":"integer"}`, `"90071992547409.93e2"`, `9007199254740993`},
		{"integer", `{"type":"integer"}`, `"1.5e1"`, `15`},
		{"integer", `{"type":"integer"}`, `"1e-1"`, `"1e-1"`},
		{"integer", `{"type":"integer"}`, `"Infinity"`, `"Infinity"`},
		{"integer", `{"type":"integer"}`, `"-inf"`, `"-inf"`},

		// number
		{"number", `{"type":"number"}`, `"4.0"`, `4`},
		{"number", `{"type":"number"}`, `"3.5"`, `3.5`},
		{"number", `{"type":"number"}`, `" -0.25 "`, `-0.25`},
		{"number", `{"type":"number"}`, `".5"`, `0.5`},
		{"number", `{"type":"number"}`, `"1e-3"`, `0.001`},
		{"number", `{"type":"number"}`, `"2.5e-10"`, `2.5e-10`},
		{"number", `{"type":"number"}`, `"0.1000000000000000055511151231257827"`, `0.1000000000000000055511151231257827`},
		{"number", `{"type":"number"}`, `"inf"`, `"inf"`},
		{"number", `{"type":"number"}`, `"-Infinity"`, `"-Infinity"`},
		{"number", `{"type":"number"}`, `"NaN"`, `"NaN"`},
		{"number", `{"type":"number"}`, `"1e400"`, `"1e400"`},
		{"number", `{"type":"number"}`, `"1e-400"`, `"1e-400"`},
		{"number", `{"type":"number"}`, `"12abc"`, `"12abc"`},
		{"number", `{"type":"number"}`, `"9007199254740993"`, `9007199254740993`},
		{"number", `{"type":"number"}`, `"1E+2"`, `100`},
		{"number", `{"type":"number"}`, `"-1e-7"`, `-1e-7`},
		{"number", `{"type":"number"}`, `"nan"`, `"nan"`},

		// boolean
		{"boolean", `{"type":"boolean"}`, `"true"`, `true`},
		{"boolean", `{"type":"boolean"}`, `" TRUE "`, `true`},
		{"boolean", `{"type":"boolean"}`, `"False"`, `false`},
		{"boolean", `{"type":"boolean"}`, `"yes"`, `"yes"`},
		{"boolean", `{"type":"boolean"}`, `"1"`, `"1"`},
		{"boolean", `{"type":"boolean"}`, `"on"`, `"on"`},
		{"boolean", `{"type":"boolean"}`, `1`, `1`},
		{"boolean", `{"type":"boolean"}`, `"no"`, `"no"`},
		{"boolean", `{"type":"boolean"}`, `"0"`, `"0"`},
		{"boolean", `{"type":"boolean"}`, `"off"`, `"off"`},
		{"boolean", `{"type":"boolean"}`, `"t"`, `"t"`},

		// array
		{"array", `{"type":"array"}`, `"[1,2]"`, `[1,2]`},
		{"array", `{"type":"array"}`, `" [\"a\"] "`, `["a"]`},
		{"array", `{"type":"array"}`, `"a.py"`, `["a.py"]`},
		{"array", `{"type":"array"}`, `"[1,"`, `["[1,"]`},
		{"array", `{"type":"array"}`, `"{\"a\":1}"`, `["{\"a\":1}"]`},
		{"array", `{"type":"array"}`, `5`, `[5]`},
		{"array", `{"type":"array"}`, `true`, `[true]`},
		{"array", `{"type":"array"}`, `{"a":1}`, `[{"a":1}]`},
		{"array", `{"type":"array"}`, `null`, `null`},
		{"array", `{"type":"array"}`, `[1]`, `[1]`},
		{"array", `{"type":["array","null"]}`, `null`, `null`},
		{"array", `{"type":["array","integer"]}`, `5`, `5`},
		{"array", `{"type":"array"}`, `"[]"`, `[]`},
		{"array", `{"type":"array"}`, `" a b "`, `[" a b "]`},
		{"array", `{"type":"array"}`, `"null"`, `["null"]`},
		{"array", `{"type":"array"}`, `""`, `[""]`},

		// object
		{"object", `{"type":"object"}`, `"{\"a\":1}"`, `{"a":1}`},
		{"object", `{"type":"object"}`, `""`, `{}`},
		{"object", `{"type":"object","required":["a"]}`, `""`, `""`},
		{"object", `{"type":"object"}`, `"x"`, `"x"`},
		{"object", `{"type":"object"}`, `"[1]"`, `"[1]"`},
		{"object", `{"type":"object"}`, `"{bad"`, `"{bad"`},
		{"object", `{"type":"object"}`, `"{}"`, `{}`},
		{"object", `{"type":"object"}`, `" {\"a\":1} "`, `{"a":1}`},
		{"object", `{"type":"object","properties":{"a":{"type":"integer"}}}`, `""`, `{}`},
		{"object", `{"type":"object","allOf":[{"required":["a"]}]}`, `""`, `""`},
		{"object", `{"type":"object","nullable":true}`, `"null"`, `null`},

		// string, and unions that accept string
		{"string", `{"type":"string"}`, `"42"`, `"42"`},
		{"string", `{"type":"string"}`, `42`, `42`},
		{"string", `{"type":["string","integer"]}`, `"42"`, `"42"`},
		{"string", `{"type":["integer","string"]}`, `"42"`, `"42"`},
		{"string", `{"type":["string","boolean"]}`, `"true"`, `"true"`},
		{"string", `{"anyOf":[{"type":"string"},{"type":"number"}]}`, `"1.5"`, `"1.5"`},
		{"string", `{"type":["string","array"]}`, `"[1,2]"`, `[1,2]`},
		{"string", `{"type":["string","array"]}`, `"a.py"`, `"a.py"`},
		{"string", `{"anyOf":[{"type":"string"},{"type":"object"}]}`, `"{\"a\":1}"`, `{"a":1}`},
		{"string", `{"type":["string","number"]}`, `"1e3"`, `"1e3"`},
		{"string", `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `"42"`, `"42"`},
		{"string", `{"anyOf":[{"type":"integer"},{"type":"string"}]}`, `"9007199254740993"`, `"9007199254740993"`},
		{"string", `{"type":["string","null"]}`, `"42"`, `"42"`},
		{"string", `{"type":["string","array"]}`, `"[1,"`, `"[1,"`},

		// unions without string: schema order, first conversion wins
		{"union", `{"anyOf":[{"type":"integer"},{"type":"null"}]}`, `"42"`, `42`},
		{"union", `{"type":["integer","boolean"]}`, `"true"`, `true`},
		{"union", `{"type":["boolean","integer"]}`, `"1"`, `1`},
		{"union", `{"type":["number","integer"]}`, `"4.0"`, `4`},
		{"union", `{"type":["array","integer"]}`, `"42"`, `42`},
		{"union", `{"type":["integer","array"]}`, `"x"`, `["x"]`},
		{"union", `{"oneOf":[{"type":"boolean"},{"type":"number"}]}`, `"2.5"`, `2.5`},
		{"union", `{"type":["integer","object"]}`, `"x"`, `"x"`},
		{"union", `{"anyOf":[{"type":"null"},{"type":"integer"}]}`, `" 42 "`, `42`},
		{"union", `{"anyOf":[{"type":"integer"},{"type":"null"}]}`, `"9007199254740993"`, `9007199254740993`},
		{"union", `{"anyOf":[{"type":"boolean"},{"type":"null"}]}`, `"False"`, `false`},
		{"union", `{"anyOf":[{"type":"integer"},{"type":"null"}]}`, `"4.5"`, `"4.5"`},
		{"union", `{"type":["integer","number"]}`, `"4.5"`, `4.5`},
		{"union", `{"anyOf":[{"type":"array","items":{"type":"integer"}},{"type":"null"}]}`, `"3"`, `[3]`},

		// non-string values: only wrapping, the rest stays
		{"non-string", `{"type":"integer"}`, `true`, `true`},
		{"non-string", `{"type":"integer"}`, `1.5`, `1.5`},
		{"non-string", `{"type":"string"}`, `{"a":1}`, `{"a":1}`},
		{"non-string", `{"type":"string"}`, `[1]`, `[1]`},
		{"non-string", `{"type":"boolean"}`, `null`, `null`},
		{"non-string", `{"type":["array","string"]}`, `5`, `[5]`},
		{"non-string", `{"type":["array","number"]}`, `5`, `5`},
		{"non-string", `{"type":["array","integer"]}`, `5.5`, `[5.5]`},
		{"non-string", `{"type":["array","object"]}`, `{"a":1}`, `{"a":1}`},

		// types implied by enum and const; no constraint leaves values alone
		{"enum", `{"enum":[1,2,3]}`, `"2"`, `2`},
		{"enum", `{"enum":["1","2"]}`, `"2"`, `"2"`},
		{"const", `{"const":true}`, `"true"`, `true`},
		{"none", `{}`, `"5"`, `"5"`},
		{"none", `true`, `"5"`, `"5"`},
		{"none", `{"description":"anything"}`, `"[1]"`, `"[1]"`},
	}
	for _, tt := range tests {
		t.Run(tt.row+"/"+tt.schema+"/"+tt.in, func(t *testing.T) {
			s := propSchema(t, tt.schema)
			got, err := s.Coerce(json.RawMessage(`{"v":` + tt.in + `}`))
			if err != nil {
				t.Fatalf("Coerce: %v", err)
			}
			if want := `{"v":` + tt.want + `}`; string(got) != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}
}

func TestCoerceNested(t *testing.T) {
	tests := []struct {
		name, schema, in, want string
	}{
		{"array of integers",
			`{"properties":{"ids":{"type":"array","items":{"type":"integer"}}}}`,
			`{"ids":["1","2"]}`, `{"ids":[1,2]}`},
		{"array parsed from a string, elements normalized",
			`{"properties":{"ids":{"type":"array","items":{"type":"integer"}}}}`,
			`{"ids":"[\"1\",\"2\"]"}`, `{"ids":[1,2]}`},
		{"wrapped element normalized",
			`{"properties":{"ids":{"type":"array","items":{"type":"integer"}}}}`,
			`{"ids":"7"}`, `{"ids":[7]}`},
		{"nested arrays",
			`{"properties":{"m":{"type":"array","items":{"type":"array","items":{"type":"number"}}}}}`,
			`{"m":[["1","2.5"],"[\"3\"]"]}`, `{"m":[[1,2.5],[3]]}`},
		{"nested object properties",
			`{"properties":{"o":{"type":"object","properties":{"n":{"type":"integer"},"b":{"type":"boolean"}}}}}`,
			`{"o":{"n":"5","b":"false","x":"5"}}`, `{"o":{"n":5,"b":false,"x":"5"}}`},
		{"object parsed from a string, properties normalized",
			`{"properties":{"o":{"type":"object","properties":{"n":{"type":"integer"}}}}}`,
			`{"o":"{\"n\":\"5\"}"}`, `{"o":{"n":5}}`},
		{"prefixItems and items",
			`{"properties":{"t":{"type":"array","prefixItems":[{"type":"integer"},{"type":"boolean"}],"items":{"type":"number"}}}}`,
			`{"t":["1","true","2.5"]}`, `{"t":[1,true,2.5]}`},
		{"draft-7 tuple items",
			`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"t":{"type":"array","items":[{"type":"integer"}],"additionalItems":{"type":"boolean"}}}}`,
			`{"t":["1","true"]}`, `{"t":[1,true]}`},
		{"additionalProperties schema",
			`{"additionalProperties":{"type":"integer"}}`,
			`{"a":"1","b":"2"}`, `{"a":1,"b":2}`},
		{"local $ref to $defs",
			`{"properties":{"n":{"$ref":"#/$defs/count"}},"$defs":{"count":{"type":"integer"}}}`,
			`{"n":"3"}`, `{"n":3}`},
		{"local $ref to definitions",
			`{"properties":{"n":{"$ref":"#/definitions/count"}},"definitions":{"count":{"type":"integer"}}}`,
			`{"n":"3"}`, `{"n":3}`},
		{"escaped $ref pointer",
			`{"properties":{"n":{"$ref":"#/$defs/a~1b%20c"}},"$defs":{"a/b c":{"type":"integer"}}}`,
			`{"n":"3"}`, `{"n":3}`},
		{"recursive $ref",
			`{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`,
			`{"v":"1","kids":[{"v":"2","kids":"{\"v\":\"3\"}"}]}`, `{"v":1,"kids":[{"v":2,"kids":[{"v":3}]}]}`},
		{"allOf",
			`{"allOf":[{"properties":{"a":{"type":"integer"}}},{"properties":{"b":{"type":"boolean"}}}]}`,
			`{"a":"1","b":"true"}`, `{"a":1,"b":true}`},
		{"anyOf branch chosen by shape: object",
			`{"properties":{"x":{"anyOf":[{"type":"array","items":{"type":"integer"}},{"type":"object","properties":{"n":{"type":"integer"}}}]}}}`,
			`{"x":{"n":"4"}}`, `{"x":{"n":4}}`},
		{"anyOf branch chosen by shape: array",
			`{"properties":{"x":{"anyOf":[{"type":"array","items":{"type":"integer"}},{"type":"object","properties":{"n":{"type":"integer"}}}]}}}`,
			`{"x":["4"]}`, `{"x":[4]}`},
		{"oneOf object branch chosen by required",
			`{"properties":{"x":{"oneOf":[{"type":"object","required":["a"],"properties":{"a":{"type":"integer"},"b":{"type":"string"}}},{"type":"object","required":["b"],"properties":{"b":{"type":"integer"}}}]}}}`,
			`{"x":{"b":"2"}}`, `{"x":{"b":2}}`},
		{"union with null, nested",
			`{"properties":{"l":{"type":["array","null"],"items":{"type":"integer"}}}}`,
			`{"l":"[\"1\"]"}`, `{"l":[1]}`},
		{"duplicate keys kept",
			`{"properties":{"v":{"type":"integer"}}}`,
			`{"v":"1","v":"2"}`, `{"v":1,"v":2}`},
		{"unicode and escapes kept",
			`{"properties":{"v":{"type":"integer"},"s":{"type":"string"}}}`,
			`{"s":"é\n\"<>&\u2028","v":"1"}`, `{"s":"é\n\"<>&` + "\u2028" + `","v":1}`},
		{"exact big integers in items",
			`{"properties":{"ids":{"type":"array","items":{"type":"integer"}}}}`,
			`{"ids":["9007199254740993","-18446744073709551617"]}`, `{"ids":[9007199254740993,-18446744073709551617]}`},
		{"anyOf with null around an array of integers",
			`{"properties":{"l":{"anyOf":[{"type":"array","items":{"type":"integer"}},{"type":"null"}]}}}`,
			`{"l":"[\"1\",\"2\"]"}`, `{"l":[1,2]}`},
		{"objects in an array, each a JSON string",
			`{"properties":{"v":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer"}}}}}}`,
			`{"v":["{\"n\":\"1\"}",{"n":"2"}]}`, `{"v":[{"n":1},{"n":2}]}`},
		{"a single object where a list of them is expected",
			`{"properties":{"v":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer"}}}}}}`,
			`{"v":{"n":"1"}}`, `{"v":[{"n":1}]}`},
		{"three levels, each sent as a string",
			`{"properties":{"a":{"type":"object","properties":{"b":{"type":"array","items":{"type":"object","properties":{"c":{"type":["integer","null"]}}}}}}}}`,
			`{"a":"{\"b\":\"[{\\\"c\\\":\\\"7\\\"},{\\\"c\\\":\\\"null\\\"}]\"}"}`, `{"a":{"b":[{"c":7},{"c":null}]}}`},
		{"union with string inside items keeps numeric text",
			`{"properties":{"v":{"type":"array","items":{"type":["string","integer"]}}}}`,
			`{"v":"[\"42\",42]"}`, `{"v":["42",42]}`},
		{"nullable property through a $ref",
			`{"properties":{"v":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"integer","nullable":true}}}`,
			`{"v":"null"}`, `{"v":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile(json.RawMessage(tt.schema))
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			got, err := s.Coerce(json.RawMessage(tt.in))
			if err != nil {
				t.Fatalf("Coerce: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestCoerceUnchangedKeepsBytes(t *testing.T) {
	s := propSchema(t, `{"type":"integer"}`)
	in := json.RawMessage("{ \"v\" : 1,\n \"w\": \"x\" }")
	got, err := s.Coerce(in)
	if err != nil || string(got) != string(in) {
		t.Errorf("Coerce(%s) = %s, %v; want the input unchanged", in, got, err)
	}
}

func TestCoerceRejectsInvalidJSON(t *testing.T) {
	s := propSchema(t, `{"type":"integer"}`)
	for _, in := range []string{``, `{"v":`, `{"v":1}x`, `{'v':1}`} {
		if got, err := s.Coerce(json.RawMessage(in)); err == nil {
			t.Errorf("Coerce(%q) = %s, want error", in, got)
		}
	}
}

func TestCoerceReferenceCycleTerminates(t *testing.T) {
	// References that loop without adding anything must not hang Compile
	// or Coerce.
	s, err := Compile(json.RawMessage(`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"allOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"}]}},"properties":{"v":{"$ref":"#/$defs/a"}}}`))
	if err != nil {
		t.Skipf("validator rejects the cycle: %v", err)
	}
	if _, err := s.Coerce(json.RawMessage(`{"v":{"x":["1",{"y":"2"}]}}`)); err != nil {
		t.Fatal(err)
	}
}

func TestCoerceWrapsOnce(t *testing.T) {
	// Items that are arrays of themselves: wrapping "x" must happen once,
	// not forever.
	s := mustCompile(t, `{"properties":{"v":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"array","items":{"$ref":"#/$defs/a"}}}}`)
	for in, want := range map[string]string{
		`{"v":"x"}`:   `{"v":["x"]}`,
		`{"v":5}`:     `{"v":[5]}`,
		`{"v":["x"]}`: `{"v":[["x"]]}`,
	} {
		got, err := s.Coerce(json.RawMessage(in))
		if err != nil || string(got) != want {
			t.Errorf("Coerce(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}

func TestCoercePatternProperties(t *testing.T) {
	s := mustCompile(t, `{"properties":{"name":{"type":"string"}},"patternProperties":{"^n_":{"type":"integer"},"^b_":{"type":"boolean"}},"additionalProperties":{"type":"number"}}`)
	got, err := s.Coerce(json.RawMessage(`{"name":"1","n_x":"2","b_y":"true","z":"2.5"}`))
	if want := `{"name":"1","n_x":2,"b_y":true,"z":2.5}`; err != nil || string(got) != want {
		t.Errorf("got %s, %v; want %s", got, err, want)
	}
}
