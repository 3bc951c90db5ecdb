package anthropic

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

// refEvent is wireEvent as encoding/json would decode it, the reference the
// decoder is checked against.
type refEvent struct {
	Type         string          `json:"type"`
	Index        int             `json:"index"`
	Message      json.RawMessage `json:"message"`
	ContentBlock struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Error json.RawMessage `json:"error"`
}

func (r *refEvent) equal(w *wireEvent) bool {
	return r.Type == w.Type && r.Index == w.Index && bytes.Equal(r.Message, w.Message) &&
		r.ContentBlock.Type == w.ContentBlock.Type && r.ContentBlock.ID == w.ContentBlock.ID &&
		r.ContentBlock.Name == w.ContentBlock.Name && bytes.Equal(r.ContentBlock.Input, w.ContentBlock.Input) &&
		r.Delta.Type == w.Delta.Type && r.Delta.PartialJSON == string(w.Delta.PartialJSON) &&
		r.Delta.StopReason == w.Delta.StopReason && bytes.Equal(r.Error, w.Error)
}

// compareWithEncodingJSON decodes data both ways and reports how they differ.
func compareWithEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	var d decoder
	w := wireEvent{Index: -1}
	err := d.decodeEvent(data, &w)
	ref := refEvent{Index: -1}
	refErr := json.Unmarshal(data, &ref)

	if streamtest.CompareSyntaxErrors(t, data, err, refErr) {
		return
	}
	if foldsKeys(data) {
		return // encoding/json matches keys case-insensitively; the decoder does not
	}
	if (err == nil) != (refErr == nil) {
		t.Fatalf("%q: decoder error %v, encoding/json error %v", data, err, refErr)
	}
	if !ref.equal(&w) {
		t.Fatalf("%q:\n decoder       %+v\n encoding/json %+v", data, w, ref)
	}
}

// foldsKeys reports whether data might hold a key that only case-insensitive
// matching, or an escape, turns into one of the decoded field names.
func foldsKeys(data []byte) bool {
	if bytes.Contains(data, []byte(`\u`)) || bytes.Contains(data, []byte("\u017f")) || bytes.Contains(data, []byte("\u212a")) {
		return true
	}
	lower := bytes.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, data)
	for _, k := range []string{"type", "index", "message", "content_block", "id", "name", "input", "delta", "partial_json", "stop_reason", "error"} {
		k = `"` + k + `"`
		if bytes.Count(lower, []byte(k)) != bytes.Count(data, []byte(k)) {
			return true
		}
	}
	return false
}

var decoderSeeds = append([]string{
	`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\": \"h\u00e9\"}"}}      `,
	`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{"q":[1,2,{"x":null}]}}}`,
	`{"type":"message_start","message":{"id":"msg_1","content":[],"usage":{"input_tokens":1}}}`,
	`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":1.5e3}}`,
	`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	`{"delta":{"partial_json":"\ud83d\ude00 \ud83d x \ude00 \ud83d\u0041 \/ \b\f\n\r\t"}}`,
	"{\"delta\":{\"partial_json\":\"bad \xff utf8 \xed\xa0\x80 and \xc3\"}}",
	`{"index":"1"}`, `{"index":1.0}`, `{"index":-0}`, `{"index":99999999999999999999}`, `{"index":null}`,
	`{"delta":[1]}`, `{"delta":null}`, `{"type":5,"index":2}`, `{"error":null}`,
	`{"type":"a","type":"b"}`, `{"delta":{"type":"a"},"delta":{"partial_json":"b"}}`,
	`{"Type":"x"}`,
}, streamtest.JSONSyntaxSeeds...)

func TestDecoderMatchesEncodingJSON(t *testing.T) {
	for _, data := range streamtest.DecoderInputs(t, decoderSeeds, "", "") {
		compareWithEncodingJSON(t, data)
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, data := range streamtest.DecoderInputs(f, decoderSeeds, "", "") {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareWithEncodingJSON(t, data)
	})
}

func TestParseInput(t *testing.T) {
	streamtest.CheckParseInput(t, parseInput, "input", "is")
}

// TestDecoderArena checks that strings unescaped into the arena stay intact
// while later strings of the same event are unescaped.
func TestDecoderArena(t *testing.T) {
	var d decoder
	var w wireEvent
	data := []byte(`{"delta":{"partial_json":"a\"b","type":"t\u0079pe","stop_reason":"\u0073top"}}`)
	if err := d.decodeEvent(data, &w); err != nil {
		t.Fatal(err)
	}
	if string(w.Delta.PartialJSON) != `a"b` || w.Delta.Type != "type" || w.Delta.StopReason != "stop" {
		t.Errorf("got %q, %q, %q", w.Delta.PartialJSON, w.Delta.Type, w.Delta.StopReason)
	}
}
