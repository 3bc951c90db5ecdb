package openairesponses

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/toolwire/toolwire/modelstream/internal/jsonwire"
	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

// The decoder is checked against a reference built with encoding/json: the
// data decoded into generic values, then walked by the same rules the
// decoder applies. Both sides are rendered as norm values and compared.

type normItem struct {
	Type, ID, CallID, Name, Status string
	Args                           string
	HasArgs, ArgsObject            bool
	// Input, Action and Operation are canonical JSON, "" when absent.
	Input, Action, Operation string
	Execution, EnvType       string
}

type normEvent struct {
	Type           string
	OutputIndex    int
	HasOutputIndex bool
	ItemID, Name   string
	Delta, Args    string
	HasArgs        bool
	Input          string
	HasInput       bool
	Error          string
	Item           normItem
	HasItem        bool

	RespID, RespStatus, IncompleteReason, RespError string
	Output                                          []normItem
}

func normWireItem(t *testing.T, it *wireItem) normItem {
	n := normItem{
		Type: string(it.Type), ID: string(it.ID), CallID: string(it.CallID), Name: string(it.Name), Status: string(it.Status),
		HasArgs: it.HasArguments, ArgsObject: it.ArgsObject,
		Execution: string(it.Execution), EnvType: string(it.EnvType),
	}
	if it.ArgsObject {
		n.Args = streamtest.Canonical(t, it.Arguments)
	} else {
		n.Args = string(jsonwire.Unquote(nil, it.Arguments))
	}
	for _, f := range []struct {
		dst *string
		raw []byte
	}{{&n.Input, it.Input}, {&n.Action, it.Action}, {&n.Operation, it.Operation}} {
		if f.raw != nil {
			*f.dst = streamtest.Canonical(t, f.raw)
		}
	}
	return n
}

// normWire renders what the decoder produced.
func normWire(t *testing.T, w *wireEvent) normEvent {
	n := normEvent{
		Type: w.Type, OutputIndex: w.OutputIndex, HasOutputIndex: w.HasOutputIndex,
		ItemID: string(w.ItemID), Name: string(w.Name),
		Delta: string(jsonwire.Unquote(nil, w.Delta)), Args: string(jsonwire.Unquote(nil, w.Arguments)), HasArgs: w.HasArguments,
		Input: string(jsonwire.Unquote(nil, w.Input)), HasInput: w.HasInput,
		Error: string(w.Error), HasItem: w.HasItem, Item: normWireItem(t, &w.Item),
		RespID: string(w.Response.ID), RespStatus: string(w.Response.Status),
		IncompleteReason: string(w.Response.IncompleteReason), RespError: string(w.Response.Error),
	}
	for i := range w.Response.Output {
		n.Output = append(n.Output, normWireItem(t, &w.Response.Output[i]))
	}
	return n
}

// refWalker builds the reference from generic values; shape records a
// value of the wrong type.
type refWalker struct {
	t     *testing.T
	shape bool
}

// raw renders a value kept raw, "" when absent.
func (r *refWalker) raw(v any, present bool) string {
	if !present {
		return ""
	}
	out, err := json.Marshal(v)
	if err != nil {
		r.t.Fatal(err)
	}
	return string(out)
}

func (r *refWalker) str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
	default:
		r.shape = true
	}
	return ""
}

func (r *refWalker) strHas(v any, present bool) (string, bool) {
	if s, ok := v.(string); ok {
		return s, true
	}
	if present && v != nil {
		r.shape = true
	}
	return "", false
}

func (r *refWalker) object(v any) map[string]any {
	switch v := v.(type) {
	case map[string]any:
		return v
	case nil:
	default:
		r.shape = true
	}
	return nil
}

func (r *refWalker) item(v any) normItem {
	var n normItem
	m := r.object(v)
	if m == nil {
		return n
	}
	n.Type, n.ID, n.CallID = r.str(m["type"]), r.str(m["id"]), r.str(m["call_id"])
	n.Name, n.Status = r.str(m["name"]), r.str(m["status"])
	switch a := m["arguments"].(type) {
	case string:
		n.Args, n.HasArgs = a, true
	case map[string]any:
		n.Args, n.HasArgs, n.ArgsObject = r.raw(a, true), true, true
	case nil:
	default:
		r.shape = true
	}
	for _, f := range []struct {
		dst *string
		key string
	}{{&n.Input, "input"}, {&n.Action, "action"}, {&n.Operation, "operation"}} {
		v, present := m[f.key]
		*f.dst = r.raw(v, present)
	}
	n.Execution = r.str(m["execution"])
	if env := r.object(m["environment"]); env != nil {
		n.EnvType = r.str(env["type"])
	}
	return n
}

// reference decodes data with encoding/json; ok is false when the data
// holds duplicate keys, which the two sides may merge differently.
func reference(t *testing.T, data []byte) (n normEvent, shape bool, err error, ok bool) {
	v, err, ok := streamtest.ReferenceValue(t, data)
	if err != nil || !ok {
		return n, false, err, ok
	}
	r := &refWalker{t: t}
	top := r.object(v)
	if top == nil {
		return n, r.shape, nil, true
	}
	n.Type = r.str(top["type"])
	switch oi := top["output_index"].(type) {
	case json.Number:
		i, err := strconv.ParseInt(oi.String(), 10, 0)
		if err != nil {
			r.shape = true
		} else {
			n.OutputIndex, n.HasOutputIndex = int(i), true
		}
	case nil:
	default:
		r.shape = true
	}
	n.ItemID, n.Name, n.Delta = r.str(top["item_id"]), r.str(top["name"]), r.str(top["delta"])
	a, present := top["arguments"]
	n.Args, n.HasArgs = r.strHas(a, present)
	in, present := top["input"]
	n.Input, n.HasInput = r.strHas(in, present)
	if it, present := top["item"]; present {
		n.HasItem = true
		n.Item = r.item(it)
	}
	var raw struct {
		Error    json.RawMessage `json:"error"`
		Response struct {
			Error json.RawMessage `json:"error"`
		} `json:"response"`
	}
	_ = json.Unmarshal(data, &raw) // type errors elsewhere leave these decoded
	n.Error = string(raw.Error)
	if resp := r.object(top["response"]); resp != nil {
		n.RespID, n.RespStatus = r.str(resp["id"]), r.str(resp["status"])
		n.RespError = string(raw.Response.Error)
		if details := r.object(resp["incomplete_details"]); details != nil {
			n.IncompleteReason = r.str(details["reason"])
		}
		switch out := resp["output"].(type) {
		case []any:
			for _, it := range out {
				n.Output = append(n.Output, r.item(it))
			}
		case nil:
		default:
			r.shape = true
		}
	}
	return n, r.shape, nil, true
}

// compareWithEncodingJSON decodes data both ways and reports how they differ.
func compareWithEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	var d decoder
	var w wireEvent
	err := d.decodeEvent(data, &w)
	ref, refShape, refErr, ok := reference(t, data)
	streamtest.CompareWithReference(t, data, err, func() normEvent { return normWire(t, &w) }, ref, refShape, refErr, ok)
}

var decoderSeeds = append([]string{
	`{"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_1","output_index":0,"delta":"{\"a\": \"h\u00e9\"}","obfuscation":"x"}   `,
	`{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":1,"name":"f","arguments":"{}"}`,
	`{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"q\":[1]}","call_id":"call_1","name":"f"}}`,
	`{"type":"response.completed","response":{"id":"resp_1","status":"completed","error":null,"incomplete_details":null,"output":[{"id":"rs_1","type":"reasoning","summary":[]},null,{"type":"function_call","arguments":""}]}}`,
	`{"type":"response.incomplete","response":{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}}`,
	`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"m"}}}`,
	`{"type":"error","error":{"type":"insufficient_quota","code":"insufficient_quota","message":"m","param":null}}`,
	`{"type":"error","code":"ERR","message":"m","param":null}`,
	`{"delta":"\ud83d\ude00 \ud83d x \ude00 \ud83d\u0041 \/ \b\f\n\r\t"}`,
	"{\"delta\":\"bad \xff utf8 \xed\xa0\x80 and \xc3\",\"item_id\":\"\xff\"}",
	`{"output_index":"1"}`, `{"output_index":1.0}`, `{"output_index":-0}`, `{"output_index":99999999999999999999}`, `{"output_index":null}`,
	`{"item":null}`, `{"item":[]}`, `{"item":{"arguments":null}}`, `{"item":{"arguments":{}}}`, `{"arguments":5}`, `{"delta":{}}`,
	`{"response":[]}`, `{"response":{"output":{}}}`, `{"response":{"output":[1]}}`, `{"response":{"incomplete_details":"x"}}`,
	`{"type":5,"output_index":2}`, `{"error":null}`,
	`{"type":"a","type":"b"}`, `{"item":{"type":"a"},"item":{"name":"b"}}`,
	`{"delta":"`, `{"response":{"output":[{"arguments":"`,
	`{"type":"response.custom_tool_call_input.done","item_id":"ctc_1","output_index":0,"input":"x "y""}`, `{"input":5}`,
	`{"item":{"type":"custom_tool_call","input":"a
b","call_id":"c","name":"n"}}`, `{"item":{"input":[1,{"a":null}]}}`,
	`{"item":{"type":"local_shell_call","action":{"type":"exec","command":["ls"],"env":{}},"call_id":"c"}}`,
	`{"item":{"type":"shell_call","action":{"commands":["ls"]},"environment":{"type":"local"}}}`,
	`{"item":{"environment":null,"action":null,"operation":"x"}}`, `{"item":{"environment":"local"}}`, `{"item":{"environment":{"type":1}}}`,
	`{"item":{"type":"apply_patch_call","operation":{"type":"delete_file","path":"a"}}}`,
	`{"item":{"type":"tool_search_call","arguments":{"goal":"g"},"execution":"client"}}`, `{"item":{"execution":true}}`, `{"item":{"arguments":[1]}}`,
}, streamtest.JSONSyntaxSeeds...)

func TestDecoderMatchesEncodingJSON(t *testing.T) {
	for _, data := range streamtest.DecoderInputs(t, decoderSeeds, fixtureDir, fixturePattern) {
		compareWithEncodingJSON(t, data)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, data := range streamtest.DecoderInputs(f, decoderSeeds, fixtureDir, fixturePattern) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareWithEncodingJSON(t, data)
	})
}

func TestParseInput(t *testing.T) {
	streamtest.CheckParseInput(t, parseInput, "arguments", "are")
}

// TestDecoderReuse checks that an event's fields do not leak into the next
// one through the reused storage.
func TestDecoderReuse(t *testing.T) {
	var d decoder
	var w wireEvent
	first := []byte(`{"type":"response.completed","output_index":2,"item":{"id":"x"},"response":{"id":"r\u0031","output":[{"type":"function_call","name":"f","arguments":"{}"},{"type":"message"}]}}`)
	if err := d.decodeEvent(first, &w); err != nil {
		t.Fatal(err)
	}
	if string(w.Response.ID) != "r1" || len(w.Response.Output) != 2 || string(w.Response.Output[0].Name) != "f" || !w.HasItem {
		t.Errorf("first event: %+v", w)
	}
	second := []byte(`{"type":"response.completed","response":{"output":[{"type":"function_call"}]}}`)
	if err := d.decodeEvent(second, &w); err != nil {
		t.Fatal(err)
	}
	if w.HasOutputIndex || w.HasItem || w.Response.ID != nil || len(w.Response.Output) != 1 {
		t.Fatalf("second event kept fields of the first: %+v", w)
	}
	if it := w.Response.Output[0]; it.Name != nil || it.HasArguments {
		t.Errorf("second event's item kept fields of the first: %+v", it)
	}
}
