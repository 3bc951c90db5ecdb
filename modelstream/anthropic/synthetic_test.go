package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

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
type synthCall = streamtest.WantCall

func TestSynthetic(t *testing.T) {
	tests := []streamtest.Case{
		{
			Name:   "error event mid-stream",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"x":`), overloaded, msgStop},
			Calls: []synthCall{{ID: "toolu_a", Name: "f", Raw: `{"x":`, At: 3,
				ErrHas: "tool call incomplete: the stream ended before the tool_use block was complete (error event at bytes"}},
			EndErr: "overloaded_error: Overloaded",
		},
		{
			Name:   "error event after a complete call",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{}`), stop(0), ping, overloaded},
			Calls:  []synthCall{{ID: "toolu_a", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 3}},
			EndErr: "error event at bytes",
		},
		{
			Name:   "eof mid-block",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"q":"fa`)},
			Calls: []synthCall{{ID: "toolu_a", Name: "f", Raw: `{"q":"fa`, At: -1,
				ErrHas: "(stream ended before message_stop at byte {len})"}},
			EndErr: "stream ended before message_stop at byte {len}",
		},
		{
			Name:   "eof after message_delta",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"q":1}`), stop(0), msgDelta("tool_use")},
			Calls:  []synthCall{{ID: "toolu_a", Name: "f", Raw: `{"q":1}`, Input: `{"q":1}`, Complete: true, At: 3}},
			Stop:   "tool_use",
			EndErr: "stream ended before message_stop at byte {len}",
		},
		{
			Name:   "eof mid-event",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), `data: {"type":"content_block_delta","ind`},
			Calls:  []synthCall{{ID: "toolu_a", Name: "f", At: -1, ErrHas: "bad event data"}},
			EndErr: "bad event data at bytes",
		},
		{
			Name: "duplicate message_start with the same id",
			Events: []string{msgStart, msgStart, toolStart(0, "toolu_a", "f"), msgStart, inputDelta(0, `{"a":1}`), stop(0),
				msgDelta("tool_use"), msgStop},
			Calls: []synthCall{{ID: "toolu_a", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 5}},
			Stop:  "tool_use",
		},
		{
			Name: "second message_start with another id",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"a":`), msgStart2,
				toolStart(0, "toolu_b", "g"), inputDelta(0, `{}`), stop(0), msgStop},
			Calls:  []synthCall{{ID: "toolu_a", Name: "f", Raw: `{"a":`, At: 3, ErrHas: "spliced"}},
			EndErr: `second message_start at bytes`,
		},
		{
			Name: "interleaved blocks are reported in seq order",
			Events: []string{msgStart, toolStart(1, "toolu_a", "f"), toolStart(2, "toolu_b", "g"), inputDelta(2, `{"b":2}`), stop(2),
				inputDelta(1, `{"a":1}`), stop(1), msgDelta("tool_use"), msgStop},
			Calls: []synthCall{
				{ID: "toolu_a", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 6},
				{ID: "toolu_b", Name: "g", Raw: `{"b":2}`, Input: `{"b":2}`, Complete: true, At: 4},
			},
			Stop: "tool_use",
		},
		{
			Name: "held call reported at the end behind an incomplete one",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), toolStart(1, "toolu_b", "g"), inputDelta(1, `{}`), stop(1),
				inputDelta(0, `{"a"`), msgDelta("max_tokens"), msgStop},
			Calls: []synthCall{
				{ID: "toolu_a", Name: "f", Raw: `{"a"`, At: 7, ErrHas: "(stop_reason max_tokens)"},
				{ID: "toolu_b", Name: "g", Raw: `{}`, Input: `{}`, Complete: true, At: 4},
			},
			Stop: "max_tokens",
		},
		{
			Name:   "tool with no delta at all",
			Events: []string{msgStart, toolStart(0, "toolu_a", "noargs"), stop(0), msgDelta("tool_use"), msgStop},
			Calls:  []synthCall{{ID: "toolu_a", Name: "noargs", Input: `{}`, Complete: true, At: 2}},
			Stop:   "tool_use",
		},
		{
			Name: "input given in content_block_start",
			Events: []string{msgStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_a","name":"f","input":{"q": "x", "n": [1, 2]}}}`,
				inputDelta(0, ""), stop(0), msgStop},
			Calls: []synthCall{{ID: "toolu_a", Name: "f", Raw: `{"q": "x", "n": [1, 2]}`, Input: `{"q":"x","n":[1,2]}`, Complete: true, At: 3}},
		},
		{
			Name: "deltas win over the start input",
			Events: []string{msgStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_a","name":"f","input":{"q":"old"}}}`,
				inputDelta(0, `{"q":"new"}`), stop(0), msgStop},
			Calls: []synthCall{{ID: "toolu_a", Name: "f", Raw: `{"q":"new"}`, Input: `{"q":"new"}`, Complete: true, At: 3}},
		},
		{
			Name:   "bad JSON in a closed block",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"a": 1,`), inputDelta(0, ` oops}`), stop(0), msgDelta("tool_use"), msgStop},
			Calls: []synthCall{{Ended: true, ID: "toolu_a", Name: "f", Raw: `{"a": 1, oops}`, At: 4,
				ErrHas: "tool input is not valid JSON: invalid character 'o' looking for beginning of object key string (after 10 bytes of the input)"}},
			Stop: "tool_use",
		},
		{
			Name:   "closed block cut short",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"a": "b`), stop(0), msgStop},
			Calls: []synthCall{{Ended: true, ID: "toolu_a", Name: "f", Raw: `{"a": "b`, At: 3,
				ErrHas: "tool input is not valid JSON: unexpected end of JSON input"}},
		},
		{
			Name:   "input that is not an object",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `[1, 2]`), stop(0), msgStop},
			Calls:  []synthCall{{Ended: true, ID: "toolu_a", Name: "f", Raw: `[1, 2]`, At: 3, ErrHas: "tool input is a JSON array, not an object"}},
		},
		{
			Name:   "two values in one input",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{}{}`), stop(0), msgStop},
			Calls:  []synthCall{{Ended: true, ID: "toolu_a", Name: "f", Raw: `{}{}`, At: 3, ErrHas: "not valid JSON"}},
		},
		{
			Name: "bad JSON in a data line stops parsing",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), `{"type":"content_block_delta",,}`, stop(0),
				toolStart(1, "toolu_b", "g"), stop(1), msgStop},
			Calls:  []synthCall{{ID: "toolu_a", Name: "f", At: 2, ErrHas: "bad event data"}},
			EndErr: `bad event data at bytes`,
		},
		{
			Name:   "content_block_start without index",
			Events: []string{msgStart, `{"type":"content_block_start","content_block":{"type":"tool_use","id":"toolu_a","name":"f","input":{}}}`, msgStop},
			EndErr: "content_block_start without index at bytes",
		},
		{
			Name:   "tool block with a field of the wrong type",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":7}}`, stop(0), msgStop},
			Calls:  []synthCall{{ID: "toolu_a", Name: "f", At: 2, ErrHas: "bad content_block_delta event"}},
			EndErr: "bad content_block_delta event at bytes",
		},
		{
			Name: "second content_block_start for an index",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"a":1}`), toolStart(0, "toolu_b", "g"),
				stop(0), msgStop},
			Calls:  []synthCall{{ID: "toolu_a", Name: "f", Raw: `{"a":1}`, At: 3, ErrHas: "incomplete"}},
			EndErr: "second content_block_start for index 0",
		},
		{
			Name: "server_tool_use, text and unknown blocks are not calls",
			Events: []string{msgStart, textStart(0), textDelta(0, "hi"), inputDelta(0, `{"no":1}`), stop(0),
				`{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}}}`,
				stop(1),
				`{"type":"content_block_start","index":2,"content_block":{"type":"mcp_thing","id":5,"name":{"odd":true}}}`,
				`{"type":"content_block_delta","index":2,"delta":"strange"}`,
				stop(2),
				toolStart(3, "toolu_a", "f"), inputDelta(3, `{}`), stop(3), msgDelta("tool_use"), msgStop},
			Calls: []synthCall{{ID: "toolu_a", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 12}},
			Stop:  "tool_use",
		},
		{
			Name: "pings, unknown events and fields, [DONE] and blank data are ignored",
			Events: []string{ping, msgStart, ": comment\n\n", `{"type":"future_event","index":"x","delta":[]}`,
				toolStart(0, "toolu_a", "f"), ping, "data:\n\n", "event: ping\n\n",
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"k\":\"v\"}","extra":[1]},"more":{}}`,
				`{"type":"content_block_delta","index":9,"delta":{"type":"input_json_delta","partial_json":"lost"}}`,
				stop(0), stop(7), msgDelta("tool_use"), `[DONE]`, msgStop},
			Calls: []synthCall{{ID: "toolu_a", Name: "f", Raw: `{"k":"v"}`, Input: `{"k":"v"}`, Complete: true, At: 10}},
			Stop:  "tool_use",
		},
		{
			Name:   "message_stop with an open block and no stop_reason",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{`), msgStop},
			Calls: []synthCall{{ID: "toolu_a", Name: "f", Raw: `{`, At: 3,
				ErrHas: "tool call incomplete: the stream ended before the tool_use block was complete"}},
		},
		{
			Name:   "error event with text data",
			Events: []string{msgStart, "event: error\ndata: upstream connect error\n\n"},
			EndErr: `error event at bytes 133-176: "upstream connect error"`,
		},
		{
			Name:   "error payload without a type",
			Events: []string{msgStart, `{"error":{"message":"quota exceeded","code":429}}`},
			EndErr: "error event at bytes 133-190: quota exceeded",
		},
		{
			Name:   "error event without data",
			Events: []string{msgStart, "event: error\n\n"},
			EndErr: "error event with no data at bytes",
		},
		{
			Name: "gateway framing: CRLF and data without a space",
			Events: []string{"event: message_start\r\ndata:" + msgStart + "\r\n\r\n",
				"data:" + toolStart(0, "toolu_a", "f") + "\r\n\r\n",
				"data:" + inputDelta(0, `{"z":true}`) + "   \r\n\r\n",
				"data:" + stop(0) + "\r\n\r\n",
				"data:" + msgStop + "\r\n\r\n"},
			Calls: []synthCall{{ID: "toolu_a", Name: "f", Raw: `{"z":true}`, Input: `{"z":true}`, Complete: true, At: 3}},
		},
		{
			Name:   "an event after message_stop fails the stream instead of being dropped",
			Events: []string{msgStart, msgStop, toolStart(0, "toolu_a", "f"), stop(0), "garbage"},
			EndErr: "stream continues after message_stop: another event at bytes {1}-{2}",
		},
		{
			Name: "ping, [DONE], comments and blank data after message_stop are harmless",
			Events: []string{msgStart, toolStart(0, "toolu_a", "f"), stop(0), msgDelta("tool_use"), msgStop,
				ping, "[DONE]", ": keepalive\n\n", "data:\n\n"},
			Calls: []synthCall{{ID: "toolu_a", Name: "f", Input: `{}`, Complete: true, At: 2}},
			Stop:  "tool_use",
		},
		{
			Name:   "empty input",
			EndErr: "stream ended before message_stop at byte 0",
		},
	}
	streamtest.RunCases(t, parse, frame, tests, streamtest.CaseOpts{})
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
	data, _ := frame([]string{msgStart, toolStart(0, "toolu_a", "f"), inputDelta(0, `{"a":`)})
	res, want := streamtest.CheckReadError(t, New(), data, contract)
	if len(res.Calls) != 1 || res.Calls[0].Complete || !strings.Contains(res.Calls[0].Err, want) {
		t.Errorf("calls = %+v, want one incomplete call citing the read error", res.Calls)
	}
}
