package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

const (
	msgStart  = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1}}}`
	msgStart2 = `{"type":"message_start","message":{"id":"msg_2","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1}}}`
	msgStop   = `{"type":"message_stop"}`
	ping      = `{"type": "ping"}`
)

func toolStart(index int, id, name string) string {
	return fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, index, id, name)
}

func textStart(index int) string {
	return fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, index)
}

func textDelta(index int, text string) string {
	return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, index, strconv.Quote(text))
}

func inputDelta(index int, partial string) string {
	q, _ := json.Marshal(partial)
	return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, index, q)
}

func stop(index int) string {
	return fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index)
}

func msgDelta(reason string) string {
	return fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":9}}`, reason)
}

const overloaded = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"

// synthCall is an expected call; at is the position in the case's event
// list of the event that completes or ends it, -1 for the end of the input.
type synthCall struct {
	id, name   string
	input, raw string
	complete   bool
	errHas     string
	at         int
}

func TestSynthetic(t *testing.T) {
	tests := []struct {
		name   string
		events []string
		calls  []synthCall
		stop   string
		// endErr must be contained in End.Err; "" wants no error. {len} is
		// replaced by the input length.
		endErr string
	}{
		{
			name:   "error event mid-stream",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"x":`), overloaded, msgStop},
			calls: []synthCall{{id: "toolu_a", name: "f", raw: `{"x":`, at: 3,
				errHas: "tool call incomplete: the stream ended before the tool_use block was complete (error event at bytes"}},
			endErr: "overloaded_error: Overloaded",
		},
		{
			name:   "error event after a complete call",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{}`), stop(0), ping, overloaded},
			calls:  []synthCall{{id: "toolu_a", name: "f", raw: `{}`, input: `{}`, complete: true, at: 3}},
			endErr: "error event at bytes",
		},
		{
			name:   "eof mid-block",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"q":"fa`)},
			calls: []synthCall{{id: "toolu_a", name: "f", raw: `{"q":"fa`, at: -1,
				errHas: "(stream ended before message_stop at byte {len})"}},
			endErr: "stream ended before message_stop at byte {len}",
		},
		{
			name:   "eof after message_delta",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"q":1}`), stop(0), msgDelta("tool_use")},
			calls:  []synthCall{{id: "toolu_a", name: "f", raw: `{"q":1}`, input: `{"q":1}`, complete: true, at: 3}},
			stop:   "tool_use",
			endErr: "stream ended before message_stop at byte {len}",
		},
		{
			name:   "eof mid-event",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), `data: {"type":"content_block_delta","ind`},
			calls:  []synthCall{{id: "toolu_a", name: "f", at: -1, errHas: "bad event data"}},
			endErr: "bad event data at bytes",
		},
		{
			name: "duplicate message_start with the same id",
			events: []string{msgStart, msgStart, toolStart(0, "toolu_a", "f"), msgStart, inputDelta(0, `{"a":1}`), stop(0),
				msgDelta("tool_use"), msgStop},
			calls: []synthCall{{id: "toolu_a", name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 5}},
			stop:  "tool_use",
		},
		{
			name: "second message_start with another id",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"a":`), msgStart2,
				toolStart(0, "toolu_b", "g"), inputDelta(0, `{}`), stop(0), msgStop},
			calls:  []synthCall{{id: "toolu_a", name: "f", raw: `{"a":`, at: 3, errHas: "spliced"}},
			endErr: `second message_start at bytes`,
		},
		{
			name: "interleaved blocks are reported in seq order",
			events: []string{msgStart, toolStart(1, "toolu_a", "f"), toolStart(2, "toolu_b", "g"), inputDelta(2, `{"b":2}`), stop(2),
				inputDelta(1, `{"a":1}`), stop(1), msgDelta("tool_use"), msgStop},
			calls: []synthCall{
				{id: "toolu_a", name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 6},
				{id: "toolu_b", name: "g", raw: `{"b":2}`, input: `{"b":2}`, complete: true, at: 4},
			},
			stop: "tool_use",
		},
		{
			name: "held call reported at the end behind an incomplete one",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), toolStart(1, "toolu_b", "g"), inputDelta(1, `{}`), stop(1),
				inputDelta(0, `{"a"`), msgDelta("max_tokens"), msgStop},
			calls: []synthCall{
				{id: "toolu_a", name: "f", raw: `{"a"`, at: 7, errHas: "(stop_reason max_tokens)"},
				{id: "toolu_b", name: "g", raw: `{}`, input: `{}`, complete: true, at: 4},
			},
			stop: "max_tokens",
		},
		{
			name:   "tool with no delta at all",
			events: []string{msgStart, toolStart(0, "toolu_a", "noargs"), stop(0), msgDelta("tool_use"), msgStop},
			calls:  []synthCall{{id: "toolu_a", name: "noargs", input: `{}`, complete: true, at: 2}},
			stop:   "tool_use",
		},
		{
			name: "input given in content_block_start",
			events: []string{msgStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_a","name":"f","input":{"q": "x", "n": [1, 2]}}}`,
				inputDelta(0, ""), stop(0), msgStop},
			calls: []synthCall{{id: "toolu_a", name: "f", raw: `{"q": "x", "n": [1, 2]}`, input: `{"q":"x","n":[1,2]}`, complete: true, at: 3}},
		},
		{
			name: "deltas win over the start input",
			events: []string{msgStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_a","name":"f","input":{"q":"old"}}}`,
				inputDelta(0, `{"q":"new"}`), stop(0), msgStop},
			calls: []synthCall{{id: "toolu_a", name: "f", raw: `{"q":"new"}`, input: `{"q":"new"}`, complete: true, at: 3}},
		},
		{
			name:   "bad JSON in a closed block",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"a": 1,`), inputDelta(0, ` oops}`), stop(0), msgDelta("tool_use"), msgStop},
			calls: []synthCall{{id: "toolu_a", name: "f", raw: `{"a": 1, oops}`, at: 4,
				errHas: "tool input is not valid JSON: invalid character 'o' looking for beginning of object key string (after 10 bytes of the input)"}},
			stop: "tool_use",
		},
		{
			name:   "closed block cut short",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"a": "b`), stop(0), msgStop},
			calls: []synthCall{{id: "toolu_a", name: "f", raw: `{"a": "b`, at: 3,
				errHas: "tool input is not valid JSON: unexpected end of JSON input"}},
		},
		{
			name:   "input that is not an object",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `[1, 2]`), stop(0), msgStop},
			calls:  []synthCall{{id: "toolu_a", name: "f", raw: `[1, 2]`, at: 3, errHas: "tool input is a JSON array, not an object"}},
		},
		{
			name:   "two values in one input",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{}{}`), stop(0), msgStop},
			calls:  []synthCall{{id: "toolu_a", name: "f", raw: `{}{}`, at: 3, errHas: "not valid JSON"}},
		},
		{
			name: "bad JSON in a data line stops parsing",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), `{"type":"content_block_delta",,}`, stop(0),
				toolStart(1, "toolu_b", "g"), stop(1), msgStop},
			calls:  []synthCall{{id: "toolu_a", name: "f", at: 2, errHas: "bad event data"}},
			endErr: `bad event data at bytes`,
		},
		{
			name:   "content_block_start without index",
			events: []string{msgStart, `{"type":"content_block_start","content_block":{"type":"tool_use","id":"toolu_a","name":"f","input":{}}}`, msgStop},
			endErr: "content_block_start without index at bytes",
		},
		{
			name:   "tool block with a field of the wrong type",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":7}}`, stop(0), msgStop},
			calls:  []synthCall{{id: "toolu_a", name: "f", at: 2, errHas: "bad content_block_delta event"}},
			endErr: "bad content_block_delta event at bytes",
		},
		{
			name: "second content_block_start for an index",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"a":1}`), toolStart(0, "toolu_b", "g"),
				stop(0), msgStop},
			calls:  []synthCall{{id: "toolu_a", name: "f", raw: `{"a":1}`, at: 3, errHas: "incomplete"}},
			endErr: "second content_block_start for index 0",
		},
		{
			name: "server_tool_use, text and unknown blocks are not calls",
			events: []string{msgStart, textStart(0), textDelta(0, "hi"), inputDelta(0, `{"no":1}`), stop(0),
				`{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}}}`,
				stop(1),
				`{"type":"content_block_start","index":2,"content_block":{"type":"mcp_thing","id":5,"name":{"odd":true}}}`,
				`{"type":"content_block_delta","index":2,"delta":"strange"}`,
				stop(2),
				toolStart(3, "toolu_a", "f"), inputDelta(3, `{}`), stop(3), msgDelta("tool_use"), msgStop},
			calls: []synthCall{{id: "toolu_a", name: "f", raw: `{}`, input: `{}`, complete: true, at: 12}},
			stop:  "tool_use",
		},
		{
			name: "pings, unknown events and fields, [DONE] and blank data are ignored",
			events: []string{ping, msgStart, ": comment\n\n", `{"type":"future_event","index":"x","delta":[]}`,
				toolStart(0, "toolu_a", "f"), ping, "data:\n\n", "event: ping\n\n",
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"k\":\"v\"}","extra":[1]},"more":{}}`,
				`{"type":"content_block_delta","index":9,"delta":{"type":"input_json_delta","partial_json":"lost"}}`,
				stop(0), stop(7), msgDelta("tool_use"), `[DONE]`, msgStop},
			calls: []synthCall{{id: "toolu_a", name: "f", raw: `{"k":"v"}`, input: `{"k":"v"}`, complete: true, at: 10}},
			stop:  "tool_use",
		},
		{
			name:   "message_stop with an open block and no stop_reason",
			events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{`), msgStop},
			calls: []synthCall{{id: "toolu_a", name: "f", raw: `{`, at: 3,
				errHas: "tool call incomplete: the stream ended before the tool_use block was complete"}},
		},
		{
			name:   "error event with text data",
			events: []string{msgStart, "event: error\ndata: upstream connect error\n\n"},
			endErr: `error event at bytes 133-176: "upstream connect error"`,
		},
		{
			name:   "error payload without a type",
			events: []string{msgStart, `{"error":{"message":"quota exceeded","code":429}}`},
			endErr: "error event at bytes 133-190: quota exceeded",
		},
		{
			name:   "error event without data",
			events: []string{msgStart, "event: error\n\n"},
			endErr: "error event with no data at bytes",
		},
		{
			name: "gateway framing: CRLF and data without a space",
			events: []string{"event: message_start\r\ndata:" + msgStart + "\r\n\r\n",
				"data:" + toolStart(0, "toolu_a", "f") + "\r\n\r\n",
				"data:" + inputDelta(0, `{"z":true}`) + "   \r\n\r\n",
				"data:" + stop(0) + "\r\n\r\n",
				"data:" + msgStop + "\r\n\r\n"},
			calls: []synthCall{{id: "toolu_a", name: "f", raw: `{"z":true}`, input: `{"z":true}`, complete: true, at: 3}},
		},
		{
			name:   "nothing after message_stop is read",
			events: []string{msgStart, msgStop, toolStart(0, "toolu_a", "f"), stop(0), "garbage"},
		},
		{
			name:   "empty input",
			endErr: "stream ended before message_stop at byte 0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, ends := frame(tt.events)
			for _, feed := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", bytes.NewReader(data)},
				{"one byte", iotest.OneByteReader(bytes.NewReader(data))},
			} {
				res := parse(t, feed.r)
				if len(res.Calls) != len(tt.calls) {
					t.Fatalf("%s: got %d calls, want %d: %+v", feed.name, len(res.Calls), len(tt.calls), res.Calls)
				}
				for i, w := range tt.calls {
					c := res.Calls[i]
					wantAt := int64(len(data))
					if w.at >= 0 {
						wantAt = ends[w.at]
					}
					var wantInput json.RawMessage
					if w.complete {
						wantInput = json.RawMessage(w.input)
					}
					if c.ID != w.id || c.Name != w.name || c.RawInput != w.raw || c.Complete != w.complete ||
						!bytes.Equal(c.Input, wantInput) || c.At != wantAt {
						t.Errorf("%s: call %d = %+v (Input %s)\nwant ID %q Name %q RawInput %q Complete %v Input %s At %d",
							feed.name, i, c, c.Input, w.id, w.name, w.raw, w.complete, wantInput, wantAt)
					}
					errHas := strings.ReplaceAll(w.errHas, "{len}", strconv.Itoa(len(data)))
					if (errHas == "") != (c.Err == "") || !strings.Contains(c.Err, errHas) {
						t.Errorf("%s: call %d Err = %q, want it to contain %q", feed.name, i, c.Err, errHas)
					}
				}
				end := res.Ends[0]
				if end.StopReason != tt.stop {
					t.Errorf("%s: StopReason = %q, want %q", feed.name, end.StopReason, tt.stop)
				}
				endErr := strings.ReplaceAll(tt.endErr, "{len}", strconv.Itoa(len(data)))
				if (endErr == "") != (end.Err == "") || !strings.Contains(end.Err, endErr) {
					t.Errorf("%s: End.Err = %q, want it to contain %q", feed.name, end.Err, endErr)
				}
			}
		})
	}
}

func TestBadDataOffsets(t *testing.T) {
	data, ends := frame([]string{msgStart, ping, `{"type":"ping",]`})
	res := parse(t, bytes.NewReader(data))
	want := fmt.Sprintf("bad event data at bytes %d-%d: invalid character ']' looking for beginning of object key string (after 16 bytes of the data)", ends[1], ends[2])
	if got := res.Ends[0].Err; got != want {
		t.Errorf("End.Err = %q\nwant %q", got, want)
	}
}

func TestSyntheticID(t *testing.T) {
	noID := func(msg, input string) []byte {
		data, _ := frame([]string{msg,
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","name":"f","input":{}}}`,
			inputDelta(0, input), stop(0), msgStop})
		return data
	}
	id := func(data []byte) string {
		t.Helper()
		res := parse(t, bytes.NewReader(data))
		if len(res.Calls) != 1 {
			t.Fatalf("got %d calls, want 1", len(res.Calls))
		}
		return res.Calls[0].ID
	}
	a := id(noID(msgStart, `{"x":1}`))
	if !strings.HasPrefix(a, "toolu_synth_") || len(a) != len("toolu_synth_")+24 {
		t.Errorf("synthesized id %q, want toolu_synth_ and 24 hex digits", a)
	}
	if b := id(noID(msgStart, `{"x":1}`)); b != a {
		t.Errorf("same stream gave ids %q and %q", a, b)
	}
	if b := id(noID(msgStart2, `{"x":1}`)); b == a {
		t.Errorf("another message gave the same id %q", a)
	}
	if b := id(noID(msgStart, `{"x":2}`)); b == a {
		t.Errorf("another input gave the same id %q", a)
	}
}

func TestHandlerErrorStops(t *testing.T) {
	data, _ := frame([]string{msgStart, toolStart(0, "toolu_a", "f"), stop(0), toolStart(1, "toolu_b", "g"), stop(1), msgStop})
	streamtest.CheckHandlerErrorStops(t, New(), data)
}

func TestContextCancelled(t *testing.T) {
	data, _ := frame([]string{msgStart, toolStart(0, "toolu_a", "f"), stop(0), toolStart(1, "toolu_b", "g"), stop(1), msgStop})
	streamtest.CheckContextCancelled(t, New(), data)
}

func TestReadError(t *testing.T) {
	data, ends := frame([]string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"a":`)})
	errConn := errors.New("connection reset")
	r := io.MultiReader(bytes.NewReader(data), iotest.ErrReader(errConn))
	var res result
	err := New().Parse(context.Background(), r, &res)
	if !errors.Is(err, errConn) {
		t.Fatalf("Parse = %v, want it to wrap %v", err, errConn)
	}
	checkContract(t, &res)
	want := fmt.Sprintf("read error after byte %d: connection reset", ends[2])
	if res.Ends[0].Err != want {
		t.Errorf("End.Err = %q, want %q", res.Ends[0].Err, want)
	}
	if len(res.Calls) != 1 || res.Calls[0].Complete || !strings.Contains(res.Calls[0].Err, want) {
		t.Errorf("calls = %+v, want one incomplete call citing the read error", res.Calls)
	}
}
