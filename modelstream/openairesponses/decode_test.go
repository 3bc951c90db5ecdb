package openairesponses

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream/internal/jsonwire"
	"github.com/toolwire/toolwire/modelstream/sse"
)

// The decoder is checked against a reference built with encoding/json: the
// data decoded into generic values, then walked by the same rules the
// decoder applies. Both sides are rendered as norm values and compared.

type normItem struct {
	Type, ID, CallID, Name, Status string
	Args                           string
	HasArgs                        bool
}

type normEvent struct {
	Type           string
	OutputIndex    int
	HasOutputIndex bool
	ItemID, Name   string
	Delta, Args    string
	HasArgs        bool
	Error          string
	Item           normItem
	HasItem        bool

	RespID, RespStatus, IncompleteReason, RespError string
	Output                                          []normItem
}

func normWireItem(it *wireItem) normItem {
	return normItem{
		Type: string(it.Type), ID: string(it.ID), CallID: string(it.CallID), Name: string(it.Name), Status: string(it.Status),
		Args: string(jsonwire.Unquote(nil, it.Arguments)), HasArgs: it.HasArguments,
	}
}

// normWire renders what the decoder produced.
func normWire(w *wireEvent) normEvent {
	n := normEvent{
		Type: w.Type, OutputIndex: w.OutputIndex, HasOutputIndex: w.HasOutputIndex,
		ItemID: string(w.ItemID), Name: string(w.Name),
		Delta: string(jsonwire.Unquote(nil, w.Delta)), Args: string(jsonwire.Unquote(nil, w.Arguments)), HasArgs: w.HasArguments,
		Error: string(w.Error), HasItem: w.HasItem, Item: normWireItem(&w.Item),
		RespID: string(w.Response.ID), RespStatus: string(w.Response.Status),
		IncompleteReason: string(w.Response.IncompleteReason), RespError: string(w.Response.Error),
	}
	for i := range w.Response.Output {
		n.Output = append(n.Output, normWireItem(&w.Response.Output[i]))
	}
	return n
}

// refWalker builds the reference from generic values; shape records a
// value of the wrong type.
type refWalker struct{ shape bool }

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
	a, present := m["arguments"]
	n.Args, n.HasArgs = r.strHas(a, present)
	return n
}

// reference decodes data with encoding/json; ok is false when the data
// holds duplicate keys, which the two sides may merge differently.
func reference(t *testing.T, data []byte) (n normEvent, shape bool, err error, ok bool) {
	var check any
	if err := json.Unmarshal(data, &check); err != nil {
		return n, false, err, true
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%q: Unmarshal accepts it, Decoder says %v", data, err)
	}
	if hasDuplicateKeys(data) {
		return n, false, nil, false
	}
	r := &refWalker{}
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

// hasDuplicateKeys reports whether any object in the valid JSON data repeats a key.
func hasDuplicateKeys(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys     map[string]bool
		isObject bool
		wantKey  bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				if top != nil && top.isObject {
					top.wantKey = true
				}
				stack = append(stack, &frame{keys: map[string]bool{}, isObject: tok == '{', wantKey: true})
			default:
				stack = stack[:len(stack)-1]
			}
		default:
			if top != nil && top.isObject {
				if top.wantKey {
					k := tok.(string)
					if top.keys[k] {
						return true
					}
					top.keys[k] = true
					top.wantKey = false
				} else {
					top.wantKey = true
				}
			}
		}
	}
}

// compareWithEncodingJSON decodes data both ways and reports how they differ.
func compareWithEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	var d decoder
	var w wireEvent
	err := d.decodeEvent(data, &w)
	ref, refShape, refErr, ok := reference(t, data)

	var se *jsonwire.SyntaxError
	var refSE *json.SyntaxError
	if errors.As(refErr, &refSE) {
		if !errors.As(err, &se) {
			t.Fatalf("%q: encoding/json says %v, decoder says %v", data, refErr, err)
		}
		// At the end of the input encoding/json words some errors as if a
		// space followed; only the offset is compared there.
		atEnd := refSE.Offset == int64(len(data))
		if se.Offset != refSE.Offset || !atEnd && se.Msg != refSE.Error() {
			t.Fatalf("%q: syntax error %q at %d, encoding/json has %q at %d", data, se.Msg, se.Offset, refSE.Error(), refSE.Offset)
		}
		return
	}
	if refErr != nil {
		t.Fatalf("%q: encoding/json: %v", data, refErr)
	}
	if errors.As(err, &se) {
		t.Fatalf("%q: decoder says %v, encoding/json accepts it", data, err)
	}
	if !ok {
		return
	}
	var shape *jsonwire.ShapeError
	if errors.As(err, &shape) != refShape {
		t.Fatalf("%q: decoder error %v, reference finds a wrong-typed value: %v", data, err, refShape)
	}
	if got := normWire(&w); !reflect.DeepEqual(got, ref) {
		t.Fatalf("%q:\n decoder   %+v\n reference %+v", data, got, ref)
	}
}

var decoderSeeds = []string{
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
	`{"type":5,"output_index":2}`, `{"error":null}`, `[1,2]`, `"x"`, `null`, `5`,
	`{"type":"a","type":"b"}`, `{"item":{"type":"a"},"item":{"name":"b"}}`,
	``, ` `, `{`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,}`, `{,}`, `{"a" 1}`, `[1,]`, `{"a":tru}`, `{"a":nul}`,
	`{"a":-}`, `{"a":01}`, `{"a":1.}`, `{"a":1e}`, `{"a":1e+}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}",
	`{} x`, `{}}`, `{"a":"unterminated`, `{"a":'x'}`, `{"delta":"`, `{"response":{"output":[{"arguments":"`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
}

// fixtureData returns the data of every event of this format's fixtures.
func fixtureData(t testing.TB) [][]byte {
	names, _ := filepath.Glob(filepath.Join(fixtureDir, fixturePattern))
	var out [][]byte
	for _, n := range names {
		evs, err := sse.Events(bytes.NewReader(loadFixture(t, filepath.Base(n))))
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		for _, ev := range evs {
			out = append(out, ev.Data)
		}
	}
	return out
}

func TestDecoderMatchesEncodingJSON(t *testing.T) {
	for _, s := range decoderSeeds {
		compareWithEncodingJSON(t, []byte(s))
	}
	for _, data := range fixtureData(t) {
		compareWithEncodingJSON(t, data)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, s := range decoderSeeds {
		f.Add([]byte(s))
	}
	for _, data := range fixtureData(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareWithEncodingJSON(t, data)
	})
}

func TestParseInput(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"", "{}", ""},
		{" \n\t", "{}", ""},
		{` {"a": [1, "b c"]} `, `{"a":[1,"b c"]}`, ""},
		{`  {"a":}`, "", "tool arguments are not valid JSON: invalid character '}' looking for beginning of value (after 8 bytes of the arguments)"},
		{`{} {}`, "", "tool arguments are not valid JSON: invalid character '{' after top-level value (after 4 bytes of the arguments)"},
		{`"x"`, "", "tool arguments are a JSON string, not an object"},
	}
	for _, tt := range tests {
		got, err := parseInput([]byte(tt.in))
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("parseInput(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("parseInput(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
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
