// Package coercion turns a model's raw tool-call arguments into arguments a
// tool can trust: it parses the raw text, coerces mistyped values guided by
// the tool's input schema, and validates the result (docs/coercion.md).
//
// # Parsing (ParseRaw)
//
// Empty text, or JSON whitespace only, means {}. Strict JSON comes first, and
// the top level must be an object. If strict parsing fails, only damage whose
// repair loses no information is repaired, and the call is marked repaired:
// one code fence around the whole text, trailing commas after a value, raw
// control characters inside strings, and missing closing brackets at the very
// end when the text ends after a complete value outside any string, a
// trailing comma after that value included ({"a": [1, 2, is closed as
// {"a": [1, 2]}). Anything else is a *ParseError with the byte offset of the
// problem; in particular text cut off inside a string, or after ":", "{",
// "[" or a comma that follows no value, is never closed up and never
// becomes {}.
//
// # Coercion (Schema.Coerce)
//
// Local references (#, #/$defs/..., #/definitions/...) are followed, cycles
// included. A string value is converted by what its property accepts: "null"
// to null when null is accepted (checked first); a whole number in any common
// spelling to that exact integer ("9007199254740993" keeps every digit,
// "3.5", "inf" and "1e400" stay strings); a finite number to a number, whole
// values written as integers; "true"/"false" in any case to a boolean; JSON
// array or object text to that value; "" to {} for an object without required
// properties. When the property also accepts string, text that merely looks
// like a number or boolean stays a string. A union without string tries its
// types in the schema's order, and wrapping a value as a one-element array
// comes last, for a string or any other non-array value. Array items,
// properties (properties, patternProperties, additionalProperties) and the
// anyOf/oneOf branch a value's shape selects follow the same rules,
// recursively. Types implied by enum or const count, and OpenAPI's
// nullable: true adds null. Keys are never added or removed.
//
// # Validation (Schema.Validate)
//
// Validation uses the full JSON Schema (drafts 2020-12 and 7) and reports one
// problem per failing path, worded for a model, in a stable order (the same
// input always gives the same text) and capped in length; a path that holds
// a newline or another unprintable character is shown quoted, so that each
// problem stays one line.
//
// Every function is pure and safe for concurrent use, and numbers are never
// routed through float64.
package coercion
