package openaichat

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

type normTool struct {
	Index      int
	HasIndex   bool
	ID, Name   string
	Args       string
	ArgsObject bool
}

type normChoice struct {
	Index        int
	FinishReason string
	ToolCalls    []normTool
	HasFC        bool
	FC           normTool
}

type normChunk struct {
	ID, Object, Error string
	Choices           []normChoice
}

// normWire renders what the decoder produced.
func normWire(t *testing.T, w *wireChunk) normChunk {
	n := normChunk{ID: string(w.ID), Object: string(w.Object), Error: string(w.Error)}
	tool := func(tc *wireToolCall) normTool {
		nt := normTool{Index: tc.Index, HasIndex: tc.HasIndex, ID: string(tc.ID), Name: string(tc.Name), ArgsObject: tc.ArgsObject}
		if tc.ArgsObject {
			nt.Args = streamtest.Canonical(t, tc.Arguments)
		} else {
			nt.Args = string(jsonwire.Unquote(nil, tc.Arguments))
		}
		return nt
	}
	for i := range w.Choices {
		c := &w.Choices[i]
		nc := normChoice{Index: c.Index, FinishReason: string(c.FinishReason), HasFC: c.HasFunctionCall}
		for j := range c.ToolCalls {
			nc.ToolCalls = append(nc.ToolCalls, tool(&c.ToolCalls[j]))
		}
		if c.HasFunctionCall {
			nc.FC = tool(&c.FunctionCall)
		}
		n.Choices = append(n.Choices, nc)
	}
	return n
}

// refWalker builds the reference from generic values; shape records a
// value of the wrong type under "choices".
type refWalker struct {
	t     *testing.T
	shape bool
}

func (r *refWalker) str(v any, critical bool) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
	default:
		r.shape = r.shape || critical
	}
	return ""
}

func (r *refWalker) index(v any, dst *int, has *bool) {
	switch v := v.(type) {
	case json.Number:
		n, err := strconv.ParseInt(v.String(), 10, 0)
		if err != nil {
			r.shape = true
			return
		}
		*dst = int(n)
		if has != nil {
			*has = true
		}
	case nil:
	default:
		r.shape = true
	}
}

func (r *refWalker) function(v any, nt *normTool) {
	switch f := v.(type) {
	case map[string]any:
		if name, ok := f["name"]; ok {
			nt.Name = r.str(name, true)
		}
		switch a := f["arguments"].(type) {
		case string:
			nt.Args = a
		case map[string]any:
			out, err := json.Marshal(a)
			if err != nil {
				r.t.Fatal(err)
			}
			nt.Args, nt.ArgsObject = string(out), true
		case nil:
		default:
			r.shape = true
		}
	case nil:
	default:
		r.shape = true
	}
}

func (r *refWalker) tool(v any) normTool {
	var nt normTool
	switch tc := v.(type) {
	case map[string]any:
		r.index(tc["index"], &nt.Index, &nt.HasIndex)
		switch id := tc["id"].(type) {
		case string:
			nt.ID = id
		case json.Number:
			nt.ID = id.String()
		case nil:
		default:
			r.shape = true
		}
		r.function(tc["function"], &nt)
	case nil:
	default:
		r.shape = true
	}
	return nt
}

func (r *refWalker) choice(v any) normChoice {
	var nc normChoice
	c, ok := v.(map[string]any)
	if !ok {
		if v != nil {
			r.shape = true
		}
		return nc
	}
	r.index(c["index"], &nc.Index, nil)
	nc.FinishReason = r.str(c["finish_reason"], true)
	switch d := c["delta"].(type) {
	case map[string]any:
		switch tcs := d["tool_calls"].(type) {
		case []any:
			for _, tc := range tcs {
				nc.ToolCalls = append(nc.ToolCalls, r.tool(tc))
			}
		case nil:
		default:
			r.shape = true
		}
		if fc, ok := d["function_call"]; ok {
			nc.HasFC = true
			r.function(fc, &nc.FC)
		}
	case nil:
	default:
		r.shape = true
	}
	return nc
}

// reference decodes data with encoding/json; ok is false when the data
// holds duplicate keys, which the two sides may merge differently.
func reference(t *testing.T, data []byte) (n normChunk, shape bool, err error, ok bool) {
	v, err, ok := streamtest.ReferenceValue(t, data)
	if err != nil || !ok {
		return n, false, err, ok
	}
	r := &refWalker{t: t}
	top, _ := v.(map[string]any)
	n.ID = r.str(top["id"], false)
	n.Object = r.str(top["object"], false)
	var raw struct {
		Error json.RawMessage `json:"error"`
	}
	if _, isObj := v.(map[string]any); isObj {
		_ = json.Unmarshal(data, &raw)
		n.Error = string(raw.Error)
	}
	switch cs := top["choices"].(type) {
	case []any:
		for _, c := range cs {
			n.Choices = append(n.Choices, r.choice(c))
		}
	case nil:
	default:
		r.shape = true
	}
	return n, r.shape, nil, true
}

// compareWithEncodingJSON decodes data both ways and reports how they differ.
func compareWithEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	var d decoder
	var w wireChunk
	err := d.decodeChunk(data, &w)
	ref, refShape, refErr, ok := reference(t, data)
	streamtest.CompareWithReference(t, data, err, func() normChunk { return normWire(t, &w) }, ref, refShape, refErr, ok)
}

var decoderSeeds = append([]string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\": \"h\u00e9\"}"}}]},"finish_reason":null}]}   `,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":7,"function":{"arguments":{"q":[1,{"x":null}]}}}]},"finish_reason":"tool_calls"}],"usage":null}`,
	`{"choices":[{"index":0,"delta":{"function_call":{"name":"f","arguments":"{}"}}}]}`,
	`{"choices":[{"index":0,"delta":{"function_call":null}}]}`,
	`{"error":{"message":"x","type":"server_error","code":null}}`,
	`{"object":"error","message":"m","type":"BadRequestError","code":400}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"\ud83d\ude00 \ud83d x \ude00 \ud83d\u0041 \/ \b\f\n\r\t"}}]}}]}`,
	"{\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"bad \xff utf8 \xed\xa0\x80 and \xc3\",\"name\":\"\xff\"}}]}}]}",
	`{"choices":[{"index":"1"}]}`, `{"choices":[{"index":1.0}]}`, `{"choices":[{"index":-0}]}`, `{"choices":[{"index":99999999999999999999}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":1e2}]}}]}`, `{"choices":[{"delta":{"tool_calls":[{"id":true}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"id":-1.5e3}]}}]}`,
	`{"choices":[null,{"delta":null},{"delta":{"tool_calls":null}},{"delta":{"tool_calls":[null]}}]}`,
	`{"choices":{}}`, `{"choices":[1]}`, `{"choices":[{"delta":[]}]}`, `{"choices":[{"delta":{"tool_calls":{}}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":[]}]}}]}`, `{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":[1]}}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"name":5}}]}}]}`, `{"choices":[{"finish_reason":5}]}`,
	`{"id":5,"object":[1],"error":null}`, `{"error":""}`,
	`{"id":"a","id":"b"}`, `{"choices":[{"index":0}],"choices":[]}`,
	`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"`,
	`{"choices":[{"delta":{"tool_calls":[{"id":1`, `{"choices":[{"delta":{"tool_calls":[{"id":-`,
}, streamtest.JSONSyntaxSeeds...)

func TestDecoderMatchesEncodingJSON(t *testing.T) {
	for _, data := range streamtest.DecoderInputs(t, decoderSeeds, fixtureDir, fixturePattern) {
		compareWithEncodingJSON(t, data)
	}
}

func FuzzDecodeChunk(f *testing.F) {
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

// TestDecoderReuse checks that a chunk's fields do not leak into the next
// one through the reused storage, and that unescaped strings stay intact
// while later strings of the same chunk are unescaped.
func TestDecoderReuse(t *testing.T) {
	var d decoder
	var w wireChunk
	first := []byte(`{"id":"a\u0062","choices":[{"index":0,"finish_reason":"st\u006fp","delta":{"tool_calls":[{"index":3,"id":"x\"y","function":{"name":"n\u0061me","arguments":"{}"}},{"index":4}]}}]}`)
	if err := d.decodeChunk(first, &w); err != nil {
		t.Fatal(err)
	}
	tc := w.Choices[0].ToolCalls[0]
	if string(w.ID) != "ab" || string(w.Choices[0].FinishReason) != "stop" || string(tc.ID) != `x"y` || string(tc.Name) != "name" || !tc.HasIndex || tc.Index != 3 {
		t.Errorf("first chunk: %+v", w)
	}
	second := []byte(`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"x"}}]}}]}`)
	if err := d.decodeChunk(second, &w); err != nil {
		t.Fatal(err)
	}
	if len(w.Choices) != 1 || len(w.Choices[0].ToolCalls) != 1 || w.ID != nil || w.Choices[0].FinishReason != nil {
		t.Fatalf("second chunk: %+v", w)
	}
	if tc := w.Choices[0].ToolCalls[0]; tc.HasIndex || tc.ID != nil || tc.Name != nil || string(tc.Arguments) != "x" {
		t.Errorf("second chunk kept fields of the first: %+v", tc)
	}
}
