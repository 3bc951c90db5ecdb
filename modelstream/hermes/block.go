package hermes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// parseBlock reads the text between <tool_call> and </tool_call>: one JSON
// object {"name": ..., "arguments": {...}}, keys in any order, possibly in a
// ```json fence. arguments may also be a JSON string holding the object
// (Granite), be named "parameters", or be missing or null for a call
// without arguments. It returns the name and the arguments compacted.
func parseBlock(body []byte) (name string, input json.RawMessage, err error) {
	text := stripFence(bytes.TrimSpace(body))
	if len(text) == 0 {
		return "", nil, errors.New("tool call block is empty")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(text, &fields); err != nil {
		var (
			se *json.SyntaxError
			te *json.UnmarshalTypeError
		)
		switch {
		case errors.As(err, &se):
			return "", nil, fmt.Errorf("tool call is not valid JSON: %v (after %d bytes of the block)", err, se.Offset)
		case errors.As(err, &te) && te.Field == "":
			return "", nil, fmt.Errorf("tool call is a JSON %s, not an object", te.Value)
		}
		return "", nil, fmt.Errorf("tool call is not a JSON object: %v", err)
	}
	if fields == nil {
		return "", nil, errors.New("tool call is JSON null, not an object")
	}
	rawName, ok := fields["name"]
	if !ok {
		return "", nil, errors.New(`tool call has no "name"`)
	}
	if err := json.Unmarshal(rawName, &name); err != nil || name == "" {
		return "", nil, fmt.Errorf(`tool call "name" is %s, not a non-empty string`, clip(rawName))
	}
	args, ok := fields["arguments"]
	if !ok {
		args = fields["parameters"]
	}
	input, err = argumentsObject(args)
	return name, input, err
}

// argumentsObject checks that args is an object, or a string holding one,
// and returns the object compacted; missing, null or blank means {}.
func argumentsObject(args json.RawMessage) (json.RawMessage, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		return json.RawMessage("{}"), nil
	}
	if args[0] == '"' {
		var s string
		if err := json.Unmarshal(args, &s); err != nil {
			return nil, fmt.Errorf("tool call arguments string is not valid: %v", err)
		}
		inner := bytes.TrimSpace([]byte(s))
		if len(inner) == 0 {
			return json.RawMessage("{}"), nil
		}
		if !json.Valid(inner) {
			var v any
			err := json.Unmarshal(inner, &v)
			return nil, fmt.Errorf("tool call arguments is a string that is not JSON: %v", err)
		}
		args = inner
	}
	if args[0] != '{' {
		return nil, fmt.Errorf("tool call arguments is a JSON %s, not an object", kind(args[0]))
	}
	var buf bytes.Buffer
	buf.Grow(len(args))
	if err := json.Compact(&buf, args); err != nil {
		return nil, fmt.Errorf("tool call arguments is not valid JSON: %v", err)
	}
	return buf.Bytes(), nil
}

// stripFence removes a Markdown code fence (```json ... ```) around text.
func stripFence(text []byte) []byte {
	if !bytes.HasPrefix(text, []byte("```")) {
		return text
	}
	nl := bytes.IndexByte(text, '\n')
	if nl < 0 {
		// One line: ```{...}``` or ```json {...}```.
		text = bytes.TrimPrefix(text[3:], []byte("json"))
	} else {
		text = text[nl+1:]
	}
	text = bytes.TrimSpace(text)
	text = bytes.TrimSuffix(text, []byte("```"))
	return bytes.TrimSpace(text)
}

// kind names the JSON value that starts with c.
func kind(c byte) string {
	switch c {
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

// maxClip bounds the raw text quoted in a message.
const maxClip = 200

func clip(b []byte) string {
	if len(b) > maxClip {
		return fmt.Sprintf("%q...", b[:maxClip])
	}
	return fmt.Sprintf("%q", b)
}
