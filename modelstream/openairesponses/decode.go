package openairesponses

import "github.com/toolwire/toolwire/modelstream/internal/jsonwire"

// This file reads event data with the small JSON reader of
// modelstream/internal/jsonwire: the whole event is validated as strictly as
// encoding/json does, but only the fields of wireEvent are materialized,
// strings without escapes are not copied, and string values that are only
// joined (deltas, arguments) are not even unescaped until the call ends.
// Responses events are often large (response.completed repeats the whole
// output), so skipping what is not needed is most of the work.
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
	w.reset()
	return d.Decode(data, func(key []byte) error { return d.eventField(key, w) })
}

func (d *decoder) eventField(key []byte, w *wireEvent) error {
	switch string(key) {
	case "type":
		return d.typeField(&w.Type, "type")
	case "output_index":
		return d.IntField(&w.OutputIndex, &w.HasOutputIndex, "output_index")
	case "item_id":
		return d.BytesField(&w.ItemID, "item_id")
	case "name":
		return d.BytesField(&w.Name, "name")
	case "delta":
		return d.escapedField(&w.Delta, nil, "delta")
	case "arguments":
		return d.escapedField(&w.Arguments, &w.HasArguments, "arguments")
	case "input":
		return d.escapedField(&w.Input, &w.HasInput, "input")
	case "error":
		return d.RawField(&w.Error)
	case "item":
		w.HasItem = true
		w.Item = wireItem{}
		return d.item(&w.Item, "item")
	case "response":
		r := &w.Response
		return d.ObjectField("response", func(key []byte) error {
			switch string(key) {
			case "id":
				return d.BytesField(&r.ID, "response.id")
			case "status":
				return d.BytesField(&r.Status, "response.status")
			case "error":
				return d.RawField(&r.Error)
			case "incomplete_details":
				return d.ObjectField("response.incomplete_details", func(key []byte) error {
					if string(key) == "reason" {
						return d.BytesField(&r.IncompleteReason, "response.incomplete_details.reason")
					}
					return d.SkipValue()
				})
			case "output":
				r.Output = r.Output[:0]
				return d.ArrayField("response.output", func() error {
					return d.item(r.addOutput(), "response.output[]")
				})
			}
			return d.SkipValue()
		})
	}
	return d.SkipValue()
}

// item reads an output item.
func (d *decoder) item(it *wireItem, name string) error {
	return d.ObjectField(name, func(key []byte) error {
		switch string(key) {
		case "type":
			return d.BytesField(&it.Type, "item.type")
		case "id":
			return d.BytesField(&it.ID, "item.id")
		case "call_id":
			return d.BytesField(&it.CallID, "item.call_id")
		case "name":
			return d.BytesField(&it.Name, "item.name")
		case "status":
			return d.BytesField(&it.Status, "item.status")
		case "arguments":
			return d.StringOrObjectField(&it.Arguments, &it.HasArguments, &it.ArgsObject, "item.arguments")
		case "input":
			return d.RawField(&it.Input)
		case "action":
			return d.RawField(&it.Action)
		case "operation":
			return d.RawField(&it.Operation)
		case "execution":
			return d.BytesField(&it.Execution, "item.execution")
		case "environment":
			return d.ObjectField("item.environment", func(key []byte) error {
				if string(key) == "type" {
					return d.BytesField(&it.EnvType, "item.environment.type")
				}
				return d.SkipValue()
			})
		}
		return d.SkipValue()
	})
}

// typeField reads the event type, without allocating for the types a stream repeats.
func (d *decoder) typeField(dst *string, name string) error {
	var b []byte
	if err := d.BytesField(&b, name); err != nil || b == nil {
		return err
	}
	*dst = intern(b)
	return nil
}

// escapedField reads a string as its content still escaped, so that the
// fragments of a call can be joined before they are unescaped: a surrogate
// pair or a UTF-8 sequence split between two deltas then survives. *has,
// if has is not nil, is set for any string.
func (d *decoder) escapedField(dst *[]byte, has *bool, name string) error {
	if d.Pos < len(d.Data) && d.Data[d.Pos] == '"' {
		start := d.Pos
		if _, err := d.ScanString(); err != nil {
			return err
		}
		*dst = d.Data[start+1 : d.Pos-1 : d.Pos-1]
		if has != nil {
			*has = true
		}
		return nil
	}
	return d.Other(name)
}

// intern returns s as a string, without allocating for the event types a
// stream repeats.
func intern(s []byte) string {
	switch string(s) {
	case "response.function_call_arguments.delta":
		return "response.function_call_arguments.delta"
	case "response.function_call_arguments.done":
		return "response.function_call_arguments.done"
	case "response.output_text.delta":
		return "response.output_text.delta"
	case "response.reasoning_summary_text.delta":
		return "response.reasoning_summary_text.delta"
	case "response.reasoning_text.delta":
		return "response.reasoning_text.delta"
	case "response.output_item.added":
		return "response.output_item.added"
	case "response.output_item.done":
		return "response.output_item.done"
	case "response.content_part.added":
		return "response.content_part.added"
	case "response.content_part.done":
		return "response.content_part.done"
	case "response.output_text.done":
		return "response.output_text.done"
	}
	return string(s)
}
