package anthropic

import (
	"bytes"

	"github.com/toolwire/toolwire/modelstream/internal/jsonwire"
)

// This file reads stream events with the small JSON reader of
// modelstream/internal/jsonwire. encoding/json spends most of a parse on
// reflection and on allocating every string it meets; here the whole event
// is still validated as strictly, but only the fields of wireEvent are
// materialized, and strings without escapes are not copied at all.
// FuzzDecodeEvent checks it against encoding/json.

// decoder reads one event's data. Byte-slice fields may point into its arena
// until the next event.
type decoder struct {
	jsonwire.Decoder
}

// decodeEvent fills w from data. It returns a *jsonwire.SyntaxError for
// malformed JSON, or else a *jsonwire.ShapeError for the first value of an
// unexpected type, with everything else decoded.
func (d *decoder) decodeEvent(data []byte, w *wireEvent) error {
	return d.Decode(data, func(key []byte) error { return d.eventField(key, w) })
}

func (d *decoder) eventField(key []byte, w *wireEvent) error {
	switch string(key) {
	case "type":
		return d.stringField(&w.Type, "type")
	case "index":
		return d.IntField(&w.Index, nil, "index")
	case "message":
		return d.rawField(&w.Message)
	case "error":
		return d.rawField(&w.Error)
	case "content_block":
		cb := &w.ContentBlock
		return d.ObjectField("content_block", func(key []byte) error {
			switch string(key) {
			case "type":
				return d.stringField(&cb.Type, "content_block.type")
			case "id":
				return d.stringField(&cb.ID, "content_block.id")
			case "name":
				return d.stringField(&cb.Name, "content_block.name")
			case "input":
				return d.rawField(&cb.Input)
			}
			return d.SkipValue()
		})
	case "delta":
		dl := &w.Delta
		return d.ObjectField("delta", func(key []byte) error {
			switch string(key) {
			case "type":
				return d.stringField(&dl.Type, "delta.type")
			case "partial_json":
				return d.BytesField(&dl.PartialJSON, "delta.partial_json")
			case "stop_reason":
				return d.stringField(&dl.StopReason, "delta.stop_reason")
			}
			return d.SkipValue()
		})
	}
	return d.SkipValue()
}

// stringField reads a string as a string, without allocating for the names
// the stream repeats.
func (d *decoder) stringField(dst *string, name string) error {
	if d.Pos < len(d.Data) && d.Data[d.Pos] == '"' {
		s, err := d.Str()
		if err == nil {
			*dst = intern(s)
		}
		return err
	}
	return d.Other(name)
}

// rawField copies a value as is; a null is kept as "null", as json.RawMessage does.
func (d *decoder) rawField(dst *[]byte) error {
	var raw []byte
	if err := d.RawField(&raw); err != nil {
		return err
	}
	*dst = bytes.Clone(raw)
	return nil
}

// intern returns s as a string, without allocating for the names the stream repeats.
func intern(s []byte) string {
	switch string(s) {
	case "content_block_delta":
		return "content_block_delta"
	case "input_json_delta":
		return "input_json_delta"
	case "text_delta":
		return "text_delta"
	case "ping":
		return "ping"
	case "content_block_start":
		return "content_block_start"
	case "content_block_stop":
		return "content_block_stop"
	case "tool_use":
		return "tool_use"
	case "text":
		return "text"
	}
	return string(s)
}
