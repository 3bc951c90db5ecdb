package openaichat

import "github.com/toolwire/toolwire/modelstream/internal/jsonwire"

// This file reads chunk data with the small JSON reader of
// modelstream/internal/jsonwire: the whole chunk is validated as strictly as
// encoding/json does, but only the fields of wireChunk are materialized, and
// strings without escapes are not copied at all. FuzzDecodeChunk checks it
// against encoding/json.

// decoder reads one chunk's data. Byte-slice fields may point into its arena
// until the next chunk.
//
// Only a value under "choices" of an unexpected type is reported, as a
// *jsonwire.ShapeError: there it could hide part of a tool call. Values of
// the wrong type elsewhere are skipped silently: they carry nothing the
// parser uses.
type decoder struct {
	jsonwire.Decoder
}

// decodeChunk fills w from data. It returns a *jsonwire.SyntaxError for
// malformed JSON, or else a *jsonwire.ShapeError for the first value under
// "choices" of an unexpected type, with everything else decoded.
func (d *decoder) decodeChunk(data []byte, w *wireChunk) error {
	w.reset()
	d.Quiet = true
	return d.Decode(data, func(key []byte) error { return d.chunkField(key, w) })
}

func (d *decoder) chunkField(key []byte, w *wireChunk) error {
	switch string(key) {
	case "id":
		return d.BytesField(&w.ID, "id")
	case "object":
		return d.BytesField(&w.Object, "object")
	case "error":
		return d.RawField(&w.Error)
	case "choices":
		w.Choices = w.Choices[:0]
		d.Quiet = false
		err := d.ArrayField("choices", func() error { return d.choice(w) })
		d.Quiet = true
		return err
	}
	return d.SkipValue()
}

func (d *decoder) choice(w *wireChunk) error {
	c := w.addChoice()
	return d.ObjectField("choices[]", func(key []byte) error {
		switch string(key) {
		case "index":
			return d.IntField(&c.Index, nil, "choices[].index")
		case "finish_reason":
			return d.BytesField(&c.FinishReason, "choices[].finish_reason")
		case "delta":
			return d.ObjectField("choices[].delta", func(key []byte) error {
				switch string(key) {
				case "tool_calls":
					c.ToolCalls = c.ToolCalls[:0]
					return d.ArrayField("delta.tool_calls", func() error {
						return d.toolCall(c.addToolCall(), "delta.tool_calls[]")
					})
				case "function_call":
					c.FunctionCall = wireToolCall{}
					c.HasFunctionCall = true
					return d.function(&c.FunctionCall, "delta.function_call")
				}
				return d.SkipValue()
			})
		}
		return d.SkipValue()
	})
}

func (d *decoder) toolCall(tc *wireToolCall, name string) error {
	return d.ObjectField(name, func(key []byte) error {
		switch string(key) {
		case "index":
			return d.IntField(&tc.Index, &tc.HasIndex, "tool_calls[].index")
		case "id":
			return d.idField(&tc.ID, "tool_calls[].id")
		case "function":
			return d.function(tc, "tool_calls[].function")
		}
		return d.SkipValue()
	})
}

// function reads a {"name","arguments"} object into tc.
func (d *decoder) function(tc *wireToolCall, name string) error {
	return d.ObjectField(name, func(key []byte) error {
		switch string(key) {
		case "name":
			return d.BytesField(&tc.Name, "function.name")
		case "arguments":
			return d.StringOrObjectField(&tc.Arguments, nil, &tc.ArgsObject, "function.arguments")
		}
		return d.SkipValue()
	})
}

// idField reads a string, or a number as its literal text: some servers send integer ids.
func (d *decoder) idField(dst *[]byte, name string) error {
	if d.Pos < len(d.Data) && (d.Data[d.Pos] == '-' || jsonwire.IsDigit(d.Data[d.Pos])) {
		start := d.Pos
		err := d.Number()
		if err == nil {
			*dst = d.Data[start:d.Pos]
		}
		return err
	}
	return d.BytesField(dst, name)
}
