package openaichat

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
			nt.Args = canonical(t, tc.Arguments)
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

// canonical re-encodes a JSON value through encoding/json, sorting keys.
func canonical(t *testing.T, raw []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("canonical(%q): %v", raw, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("canonical(%q): %v", raw, err)
	}
	return string(out)
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
	var w wireChunk
	err := d.decodeChunk(data, &w)
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
	if got := normWire(t, &w); !reflect.DeepEqual(got, ref) {
		t.Fatalf("%q:\n decoder   %+v\n reference %+v", data, got, ref)
	}
}

var decoderSeeds = []string{
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
	`{"id":5,"object":[1],"error":null}`, `{"error":""}`, `[1,2]`, `"x"`, `null`, `5`,
	`{"id":"a","id":"b"}`, `{"choices":[{"index":0}],"choices":[]}`,
	``, ` `, `{`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,}`, `{,}`, `{"a" 1}`, `[1,]`, `{"a":tru}`, `{"a":nul}`,
	`{"a":-}`, `{"a":01}`, `{"a":1.}`, `{"a":1e}`, `{"a":1e+}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\x01\"}",
	`{} x`, `{}}`, `{"a":"unterminated`, `{"a":'x'}`, `{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"`,
	`{"choices":[{"delta":{"tool_calls":[{"id":1`, `{"choices":[{"delta":{"tool_calls":[{"id":-`,
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

func FuzzDecodeChunk(f *testing.F) {
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
		{`{"a":1`, "", "tool arguments are not valid JSON: unexpected end of JSON input (after 6 bytes of the arguments)"},
		{`"x"`, "", "tool arguments are a JSON string, not an object"},
		{` null`, "", "tool arguments are a JSON null, not an object"},
		{`12`, "", "tool arguments are a JSON number, not an object"},
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
