// Package argcheck gives the verdict the router reaches on one tool call's
// arguments before it dispatches the call (docs/coercion.md): the argument
// text parsed, when it is raw, with lossless damage repaired; the values
// coerced as the tool's input schema guides; the result validated. It is
// what `toolwire coerce` prints, kept apart from the command so that the
// verdict can be tested and reused without a command line.
package argcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/toolwire/toolwire/coercion"
	"github.com/toolwire/toolwire/sanitizer"
)

// Verdict is what is decided about one call's arguments.
type Verdict struct {
	// Input is the coerced arguments on one line, null when the text is
	// unusable.
	Input json.RawMessage `json:"input"`
	// Valid says the arguments may be dispatched.
	Valid bool `json:"valid"`
	// Errors are what the model would be told, one entry per problem,
	// sanitized; never nil, so that it prints as [].
	Errors []string `json:"errors"`
	// Repaired says raw text needed repair before it parsed.
	Repaired bool `json:"repaired"`
}

// ErrNotObject is Check's error for arguments given as JSON that are not
// one JSON object: there is nothing to give a verdict on.
var ErrNotObject = errors.New("the arguments are not a JSON object")

// Check gives the verdict on in against schema. in is a JSON object, or
// with raw the argument text exactly as the model streamed it (empty text
// means {}; text cut off inside a string is unusable, never {}). The only
// error is ErrNotObject, for in without raw that is not a JSON object; a
// parse or validation failure is a verdict that is not Valid.
func Check(schema *coercion.Schema, in []byte, raw bool) (*Verdict, error) {
	v := &Verdict{Errors: []string{}}
	args := json.RawMessage(in)
	if raw {
		var err error
		args, v.Repaired, err = coercion.ParseRaw(string(in))
		if err != nil {
			v.Errors = append(v.Errors, sanitizer.Clean(err.Error()))
			return v, nil
		}
	} else if !isJSONObject(in) {
		return nil, ErrNotObject
	}
	out, err := schema.Apply(args)
	if out != nil {
		v.Input = compactJSON(out)
	}
	var ve *coercion.ValidationError
	switch {
	case err == nil:
		v.Valid = true
	case errors.As(err, &ve):
		v.Errors = append(v.Errors, ve.Lines()...)
	default:
		v.Errors = append(v.Errors, sanitizer.Clean(err.Error()))
	}
	return v, nil
}

// isJSONObject reports whether data is one JSON object, spaces around
// allowed.
func isJSONObject(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(data)
}

// compactJSON writes valid JSON on one line, keeping number literals and
// key order as they are. Each byte of invalid UTF-8, which can only sit
// inside strings, becomes U+FFFD, as JSON decoders read it.
func compactJSON(data []byte) json.RawMessage {
	if !utf8.Valid(data) {
		fixed := make([]byte, 0, len(data)+16)
		for len(data) > 0 {
			r, size := utf8.DecodeRune(data)
			if r == utf8.RuneError && size == 1 {
				fixed = utf8.AppendRune(fixed, utf8.RuneError)
			} else {
				fixed = append(fixed, data[:size]...)
			}
			data = data[size:]
		}
		data = fixed
	}
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return data // not reached: Apply returns valid JSON
	}
	return b.Bytes()
}
