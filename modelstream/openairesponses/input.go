package openairesponses

import (
	"encoding/json"
	"fmt"
)

// parseInput checks that a tool call's argument text is one JSON object and
// returns it compacted; blank text is the empty object, as no-argument tools
// send it.
func parseInput(text []byte) (json.RawMessage, error) {
	d := decoder{data: text}
	d.skipSpace()
	if d.pos == len(text) {
		return json.RawMessage("{}"), nil
	}
	start := d.pos
	err := d.skipValue()
	end := d.pos
	if d.skipSpace(); err == nil && d.pos < len(text) {
		err = d.invalid("after top-level value")
	}
	if err != nil {
		return nil, fmt.Errorf("tool arguments are not valid JSON: %s", describeJSONError(err, "arguments"))
	}
	if text[start] != '{' {
		return nil, fmt.Errorf("tool arguments are a JSON %s, not an object", kind(text[start]))
	}
	return compact(text[start:end]), nil
}

// compact returns a copy of the valid JSON value v without the space between
// tokens; it is what json.Compact does, minus the validation already done.
func compact(v []byte) []byte {
	out := make([]byte, 0, len(v))
	inString := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case inString:
			if c == '\\' {
				out = append(out, c, v[i+1])
				i++
				continue
			}
			inString = c != '"'
		case c == '"':
			inString = true
		case c == ' ', c == '\t', c == '\n', c == '\r':
			continue
		}
		out = append(out, c)
	}
	return out
}

// kind names the JSON value that starts with c.
func kind(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
