package jsonwire

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ParseInput checks that a tool call's argument text is one JSON object and
// returns it compacted; blank text is the empty object, as no-argument tools
// send it. subject starts the errors ("tool input is"), what names the text
// in the offsets of syntax errors ("input").
func ParseInput(text []byte, subject, what string) (json.RawMessage, error) {
	d := Decoder{Data: text}
	d.SkipSpace()
	if d.Pos == len(text) {
		return json.RawMessage("{}"), nil
	}
	start := d.Pos
	err := d.SkipValue()
	end := d.Pos
	if d.SkipSpace(); err == nil && d.Pos < len(text) {
		err = d.Invalid("after top-level value")
	}
	if err != nil {
		return nil, fmt.Errorf("%s not valid JSON: %s", subject, Describe(err, what))
	}
	if text[start] != '{' {
		return nil, fmt.Errorf("%s a JSON %s, not an object", subject, Kind(text[start]))
	}
	return Compact(text[start:end]), nil
}

// Describe adds where in what a JSON error happened, which the error values
// keep but leave out of their messages. It knows the errors of Decoder and
// of encoding/json.
func Describe(err error, what string) string {
	var offset int64
	var (
		se  *json.SyntaxError
		te  *json.UnmarshalTypeError
		dse *SyntaxError
		dte *ShapeError
	)
	switch {
	case errors.As(err, &se):
		offset = se.Offset
	case errors.As(err, &te):
		offset = te.Offset
	case errors.As(err, &dse):
		offset = dse.Offset
	case errors.As(err, &dte):
		offset = dte.Offset
	default:
		return err.Error()
	}
	return fmt.Sprintf("%v (after %d bytes of the %s)", err, offset, what)
}

// Compact returns a copy of the valid JSON value v without the space between
// tokens; it is what json.Compact does, minus the validation already done.
func Compact(v []byte) []byte {
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

// Kind names the JSON value that starts with c.
func Kind(c byte) string {
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
