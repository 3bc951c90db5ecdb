package coercion

import (
	"encoding/json"
	"errors"
	"strings"
)

// jsonSpace is the whitespace JSON allows between tokens.
const jsonSpace = " \t\r\n"

// ParseRaw turns a completed call's raw argument text into a JSON object,
// repairing only lossless damage and never turning damaged text into {}.
func ParseRaw(text string) (args json.RawMessage, repaired bool, err error) {
	// See the package documentation for the rules. The caller must not pass
	// the text of a block that never completed (docs/coercion.md, Raw
	// argument text, rule 5): such a call is neither repaired nor run, so it
	// never reaches this function.
	trimmed := strings.Trim(text, jsonSpace)
	if trimmed == "" {
		// A fresh slice each time: callers own what they get.
		return json.RawMessage(`{}`), false, nil
	}
	base := strings.Index(text, trimmed) // offsets are reported in text
	perr, syntax := objectError([]byte(trimmed))
	switch {
	case perr == nil:
		return json.RawMessage(trimmed), false, nil
	case !syntax:
		return nil, false, perr.shift(base)
	}
	fixed, bodyAt, rerr := repair(trimmed)
	if rerr != nil {
		return nil, false, rerr.shift(base)
	}
	if e, syntax := objectError(fixed); e != nil {
		if !syntax {
			// Well-formed once unfenced, but not an object.
			return nil, false, &ParseError{Offset: base + bodyAt, Msg: e.Msg}
		}
		// Still broken: report the original damage, which is where the
		// model should look.
		return nil, false, perr.shift(base)
	}
	return fixed, true, nil
}

// objectError returns nil when data is strict JSON with an object at the top;
// otherwise the error, and whether it is a syntax error (which repair may
// fix) rather than a well-formed value of the wrong type (which it must not
// touch).
func objectError(data []byte) (err *ParseError, syntax bool) {
	if !json.Valid(data) {
		if _, err := decodeJSON(data); err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				return pe, true
			}
		}
		return &ParseError{Msg: "invalid JSON"}, true
	}
	i := 0
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	if i < len(data) && data[i] == '{' {
		return nil, false
	}
	got := "nothing"
	if i < len(data) {
		got = jsonTypeName(data[i])
	}
	return &ParseError{Offset: i, Msg: "arguments must be a JSON object, got " + got}, false
}

func (e *ParseError) shift(by int) *ParseError {
	return &ParseError{Offset: e.Offset + by, Msg: e.Msg}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func jsonTypeName(first byte) string {
	switch first {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		return "number"
	}
}
