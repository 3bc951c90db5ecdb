package schemas

import (
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// 9007199254740993 is 2^53+1: a float64 round trip turns it into ...992.
const bigInput = `{"n":9007199254740993}`

func TestRawJSONKeepsBigIntegersThroughMsgpack(t *testing.T) {
	h, body, err := Encode(Meta{Source: "s", Seq: 0}, &Dispatch{Seq: 0, ToolUseID: "t", Tool: "x", Pool: "p", Input: RawJSON(bigInput)})
	if err != nil {
		t.Fatal(err)
	}
	_, d, err := Decode(h, body)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(d.(*Dispatch).Input); got != bigInput {
		t.Errorf("input = %s, want %s", got, bigInput)
	}
}

// A msgpack producer may send input as a native map rather than JSON text.
func TestRawJSONAcceptsNativeMsgpackMap(t *testing.T) {
	body, err := msgpack.Marshal(map[string]any{
		"seq":         1,
		"tool_use_id": "toolu_9",
		"name":        "Read",
		"complete":    true,
		"input": map[string]any{
			"path":   "ü.txt",
			"limit":  uint64(9007199254740993),
			"ranges": []any{int8(-1), 2.5, nil, true},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, d, err := Decode(headers(TypeToolUse, ContentMsgpack), body)
	if err != nil {
		t.Fatal(err)
	}
	// json.Marshal sorts keys, so the text is deterministic.
	const want = `{"limit":9007199254740993,"path":"ü.txt","ranges":[-1,2.5,null,true]}`
	if got := string(d.(*ToolUse).Input); got != want {
		t.Errorf("input = %s, want %s", got, want)
	}
}

// null means "no input" in both encodings, so a complete call cannot slip
// through Validate with a JSON null as its arguments.
func TestRawJSONNullIsAbsent(t *testing.T) {
	body, err := msgpack.Marshal(map[string]any{"seq": 0, "tool_use_id": "t", "name": "x", "complete": true, "input": " null"})
	if err != nil {
		t.Fatal(err)
	}
	wantField(t, headers(TypeToolUse, ContentMsgpack), body, "input")
	wantField(t, headers(TypeToolUse, ContentJSON), []byte(`{"seq":0,"tool_use_id":"t","name":"x","complete":true,"input":null}`), "input")
}

func TestRawJSONEncodesAsJSONText(t *testing.T) {
	b, err := msgpack.Marshal(RawJSON(bigInput))
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := msgpack.Unmarshal(b, &s); err != nil || s != bigInput {
		t.Errorf("msgpack form = %q (%v), want the string %s", s, err, bigInput)
	}
	if b, _ := msgpack.Marshal(RawJSON(nil)); len(b) != 1 || b[0] != 0xc0 {
		t.Errorf("empty RawJSON = % x, want nil (c0)", b)
	}
}
