package openairesponses

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

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

// js quotes s as a JSON string.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ev frames data as an event named after its type, as OpenAI sends them.
func ev(typ, data string) string {
	return "event: " + typ + "\ndata: " + data + "\n\n"
}

func responseObj(id, status, extra, output string) string {
	return fmt.Sprintf(`{"id":%s,"object":"response","created_at":1,"status":%s,"error":null,"incomplete_details":null,"model":"gpt-x","output":[%s],"tools":[{"type":"function","name":"f","parameters":{"type":"object"}}]%s,"usage":null}`,
		js(id), js(status), output, extra)
}

var created = ev("response.created", `{"type":"response.created","sequence_number":0,"response":`+responseObj("resp_1", "in_progress", "", "")+`}`)

// fnItem is a function_call item; empty strings leave fields out.
func fnItem(itemID, callID, name, status string, args *string) string {
	var f []string
	if itemID != "" {
		f = append(f, `"id":`+js(itemID))
	}
	f = append(f, `"type":"function_call"`)
	if status != "" {
		f = append(f, `"status":`+js(status))
	}
	if args != nil {
		f = append(f, `"arguments":`+js(*args))
	}
	if callID != "" {
		f = append(f, `"call_id":`+js(callID))
	}
	if name != "" {
		f = append(f, `"name":`+js(name))
	}
	return "{" + strings.Join(f, ",") + "}"
}

func ptr(s string) *string { return &s }

func added(oi int, itemID, callID, name string) string {
	return ev("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","sequence_number":1,"output_index":%d,"item":%s}`,
		oi, fnItem(itemID, callID, name, "in_progress", ptr(""))))
}

func delta(oi int, itemID, d string) string {
	return ev("response.function_call_arguments.delta", fmt.Sprintf(`{"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":%s,"output_index":%d,"delta":%s,"obfuscation":"xyz"}`,
		js(itemID), oi, js(d)))
}

func argsDone(oi int, itemID, a string) string {
	return ev("response.function_call_arguments.done", fmt.Sprintf(`{"type":"response.function_call_arguments.done","sequence_number":3,"item_id":%s,"output_index":%d,"arguments":%s}`,
		js(itemID), oi, js(a)))
}

func itemDone(oi int, item string) string {
	return ev("response.output_item.done", fmt.Sprintf(`{"type":"response.output_item.done","sequence_number":4,"output_index":%d,"item":%s}`, oi, item))
}

func completed(output ...string) string {
	return ev("response.completed", `{"type":"response.completed","sequence_number":9,"response":`+
		responseObj("resp_1", "completed", "", strings.Join(output, ","))+`}`)
}

func incomplete(reason string) string {
	details := `,"incomplete_details":null`
	if reason != "" {
		details = `,"incomplete_details":{"reason":` + js(reason) + `}`
	}
	return ev("response.incomplete", `{"type":"response.incomplete","sequence_number":9,"response":`+
		responseObj("resp_1", "incomplete", details, "")+`}`)
}

func failed(code, msg string) string {
	return ev("response.failed", `{"type":"response.failed","sequence_number":9,"response":`+
		responseObj("resp_1", "failed", `,"error":{"code":`+js(code)+`,"message":`+js(msg)+`}`, "")+`}`)
}

var (
	reasoningAdded = ev("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAAA"},"sequence_number":1}`)
	reasoningDone  = ev("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAAA"},"sequence_number":2}`)
	textDelta      = ev("response.output_text.delta", `{"type":"response.output_text.delta","content_index":0,"delta":"I’ll check “X”.","item_id":"msg_1","logprobs":[],"output_index":1,"sequence_number":3}`)
	messageDone    = ev("response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":{"id":"msg_1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"text":"I’ll check “X”."}],"role":"assistant"},"sequence_number":4}`)
)

// synthCall is an expected call; at is the position in the case's event
// list of the event that completes or ends it, -1 for the end of the input.
type synthCall struct {
	id, name   string
	input, raw string
	complete   bool
	errHas     string
	at         int
}

type synthCase struct {
	name   string
	events []string
	calls  []synthCall
	stop   string
	// endErr must be contained in End.Err; "" wants no error. {len} is
	// replaced by the input length, {N} by the end of event N.
	endErr string
}

var synthCases = []synthCase{
	{
		name: "reported at arguments.done, not again at output_item.done",
		events: []string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"a":`), delta(0, "fc_1", `1}`),
			argsDone(0, "fc_1", `{"a":1}`), itemDone(0, fnItem("fc_1", "call_1", "f", "completed", ptr(`{"a":1}`))),
			completed(fnItem("fc_1", "call_1", "f", "completed", ptr(`{"a":1}`)))},
		calls: []synthCall{{id: "call_1", name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 4}},
		stop:  "completed",
	},
	{
		name: "without arguments.done, reported at output_item.done",
		events: []string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"a":1}`),
			itemDone(0, fnItem("fc_1", "call_1", "f", "completed", ptr(`{"a":1}`))), completed()},
		calls: []synthCall{{id: "call_1", name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 3}},
		stop:  "completed",
	},
	{
		name:   "output_item.done alone is self-contained",
		events: []string{created, itemDone(0, fnItem("fc_1", "call_1", "f", "completed", ptr(`{"q": "x"}`))), completed()},
		calls:  []synthCall{{id: "call_1", name: "f", raw: `{"q": "x"}`, input: `{"q":"x"}`, complete: true, at: 1}},
		stop:   "completed",
	},
	{
		name: "output_item.done without arguments uses the deltas",
		events: []string{created, added(0, "fc_1", "call_1", "f"),
			// Raw bytes: a UTF-8 sequence split between two deltas.
			ev("response.function_call_arguments.delta", "{\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_1\",\"output_index\":0,\"delta\":\"{\\\"e\\\":\\\"\xf0\x9f\"}"),
			ev("response.function_call_arguments.delta", "{\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_1\",\"output_index\":0,\"delta\":\"\x98\x80\\\"}\"}"),
			itemDone(0, fnItem("fc_1", "call_1", "f", "completed", nil)), completed()},
		calls: []synthCall{{id: "call_1", name: "f", raw: `{"e":"😀"}`, input: `{"e":"😀"}`, complete: true, at: 4}},
		stop:  "completed",
	},
	{
		name: "escaped surrogate pair split between deltas",
		events: []string{created, added(0, "fc_1", "call_1", "f"),
			ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"e\":\"\ud83d"}`),
			ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"\ude00\"}"}`),
			itemDone(0, fnItem("fc_1", "call_1", "f", "completed", nil)), completed()},
		calls: []synthCall{{id: "call_1", name: "f", raw: `{"e":"😀"}`, input: `{"e":"😀"}`, complete: true, at: 4}},
		stop:  "completed",
	},
	{
		name: "arguments.done before any name waits for output_item.done",
		events: []string{created, delta(0, "fc_1", `{}`), argsDone(0, "fc_1", `{}`),
			itemDone(0, fnItem("fc_1", "call_1", "f", "completed", ptr(`{}`))), completed()},
		calls: []synthCall{{id: "call_1", name: "f", raw: `{}`, input: `{}`, complete: true, at: 3}},
		stop:  "completed",
	},
	{
		name:   "arguments.done that names the function",
		events: []string{created, delta(0, "fc_1", `{}`), ev("response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":0,"name":"g","arguments":"{}"}`), completed()},
		calls:  []synthCall{{id: "fc_1", name: "g", raw: `{}`, input: `{}`, complete: true, at: 2}},
		stop:   "completed",
	},
	{
		name: "call_id missing: the item id is the call id",
		events: []string{created, added(0, "fc_1", "", "f"), argsDone(0, "fc_1", `{}`),
			itemDone(0, fnItem("fc_1", "", "f", "completed", ptr(`{}`))), completed()},
		calls: []synthCall{{id: "fc_1", name: "f", raw: `{}`, input: `{}`, complete: true, at: 2}},
		stop:  "completed",
	},
	{
		name: "no ids at all: items matched by output_index, id synthesized",
		events: []string{created, added(3, "", "", "f"), ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","output_index":3,"delta":"{}"}`),
			itemDone(3, fnItem("", "", "f", "completed", nil)), completed()},
		calls: []synthCall{{name: "f", raw: `{}`, input: `{}`, complete: true, at: 3}},
		stop:  "completed",
	},
	{
		name: "reasoning, message and server-side items are not calls",
		events: []string{created, reasoningAdded, reasoningDone, textDelta, messageDone,
			ev("response.output_item.added", `{"type":"response.output_item.added","output_index":2,"item":{"id":"mcp_1","type":"mcp_call","name":"search","arguments":"","server_label":"s"}}`),
			ev("response.mcp_call_arguments.delta", `{"type":"response.mcp_call_arguments.delta","output_index":2,"item_id":"mcp_1","delta":"{}"}`),
			ev("response.mcp_call_arguments.done", `{"type":"response.mcp_call_arguments.done","output_index":2,"item_id":"mcp_1","arguments":"{}"}`),
			ev("response.output_item.done", `{"type":"response.output_item.done","output_index":2,"item":{"id":"mcp_1","type":"mcp_call","name":"search","arguments":"{}","output":"ok"}}`),
			added(3, "fc_1", "call_1", "f"), argsDone(3, "fc_1", `{"z":null}`), completed()},
		calls: []synthCall{{id: "call_1", name: "f", raw: `{"z":null}`, input: `{"z":null}`, complete: true, at: 10}},
		stop:  "completed",
	},
	{
		name:   "response.incomplete with max_output_tokens cuts the open call off",
		events: []string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"path":"/tm`), incomplete("max_output_tokens")},
		calls: []synthCall{{id: "call_1", name: "f", raw: `{"path":"/tm`, at: 3,
			errHas: "tool call incomplete: the stream ended before the function_call item was complete (stop reason max_output_tokens)"}},
		stop: "max_output_tokens",
	},
	{
		name: "response.incomplete after a complete call, without details",
		events: []string{created, added(0, "fc_1", "call_1", "f"), argsDone(0, "fc_1", `{}`),
			added(1, "fc_2", "call_2", "g"), delta(1, "fc_2", `{`), incomplete("")},
		calls: []synthCall{
			{id: "call_1", name: "f", raw: `{}`, input: `{}`, complete: true, at: 2},
			{id: "call_2", name: "g", raw: `{`, at: 5, errHas: "(stop reason incomplete)"},
		},
		stop: "incomplete",
	},
	{
		name: "error event, then response.failed",
		events: []string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"a":`),
			ev("error", `{"type":"error","sequence_number":2,"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"You exceeded your current quota.","param":null}}`),
			failed("insufficient_quota", "You exceeded your current quota.")},
		calls:  []synthCall{{id: "call_1", name: "f", raw: `{"a":`, at: 3, errHas: "(error event at bytes {2}-{3}: insufficient_quota: You exceeded your current quota.)"}},
		endErr: "error event at bytes {2}-{3}: insufficient_quota: You exceeded your current quota.",
	},
	{
		name:   "error event with code and message at the top level",
		events: []string{created, `data: {"type":"error","code":"ERR_SOMETHING","message":"Something went wrong","param":null}` + "\n\n"},
		endErr: "error event at bytes {0}-{1}: ERR_SOMETHING: Something went wrong",
	},
	{
		name:   "response.failed alone",
		events: []string{created, added(0, "fc_1", "call_1", "f"), failed("rate_limit_exceeded", "Request too large.")},
		calls:  []synthCall{{id: "call_1", name: "f", at: 2, errHas: "(stop reason failed; response.failed at bytes {1}-{2}: rate_limit_exceeded: Request too large.)"}},
		stop:   "failed",
		endErr: "response.failed at bytes {1}-{2}: rate_limit_exceeded: Request too large.",
	},
	{
		name:   "gateway error without a type",
		events: []string{created, `data: {"error":{"message":"quota exceeded","code":429}}` + "\n\n"},
		endErr: "error event at bytes {0}-{1}: 429: quota exceeded",
	},
	{
		name:   "error event with text data",
		events: []string{created, "event: error\ndata: upstream connect error\n\n"},
		endErr: `error event at bytes {0}-{1}: "upstream connect error"`,
	},
	{
		name:   "error event without data",
		events: []string{created, "event: error\n\n"},
		endErr: "error event at bytes {0}-{1}: no data",
	},
	{
		name:   "EOF before a final event: truncated",
		events: []string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"a":1}`)},
		calls: []synthCall{{id: "call_1", name: "f", raw: `{"a":1}`, at: -1,
			errHas: "tool call incomplete: the stream ended before the function_call item was complete (stream truncated at byte {len}"}},
		endErr: "stream truncated at byte {len}: it ended before response.completed, response.incomplete or response.failed",
	},
	{
		name:   "EOF after a complete call",
		events: []string{created, added(0, "fc_1", "call_1", "f"), argsDone(0, "fc_1", `{}`), itemDone(0, fnItem("fc_1", "call_1", "f", "completed", ptr(`{}`)))},
		calls:  []synthCall{{id: "call_1", name: "f", raw: `{}`, input: `{}`, complete: true, at: 2}},
		endErr: "stream truncated at byte {len}",
	},
	{
		name:   "EOF mid-event",
		events: []string{created, added(0, "fc_1", "call_1", "f"), `data: {"type":"response.function_call_arguments.delta","item_id":"fc_1","del`},
		calls:  []synthCall{{id: "call_1", name: "f", at: -1, errHas: "bad event data"}},
		endErr: "bad event data at bytes {1}-{len}: unexpected end of JSON input",
	},
	{
		name:   "empty input",
		endErr: "stream truncated at byte 0",
	},
	{
		name: "arguments.done wins over the deltas",
		events: []string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"a":`), delta(0, "fc_1", `"lost`),
			argsDone(0, "fc_1", `{"a": "final"}`), completed()},
		calls: []synthCall{{id: "call_1", name: "f", raw: `{"a": "final"}`, input: `{"a":"final"}`, complete: true, at: 4}},
		stop:  "completed",
	},
	{
		name:   "blank arguments are {}",
		events: []string{created, added(0, "fc_1", "call_1", "noargs"), argsDone(0, "fc_1", ""), completed()},
		calls:  []synthCall{{id: "call_1", name: "noargs", input: `{}`, complete: true, at: 2}},
		stop:   "completed",
	},
	{
		name:   "bad JSON arguments",
		events: []string{created, added(0, "fc_1", "call_1", "f"), argsDone(0, "fc_1", `{"a": 1, oops}`), completed()},
		calls: []synthCall{{id: "call_1", name: "f", raw: `{"a": 1, oops}`, at: 2,
			errHas: "tool arguments are not valid JSON: invalid character 'o' looking for beginning of object key string (after 10 bytes of the arguments)"}},
		stop: "completed",
	},
	{
		name:   "arguments that are not an object",
		events: []string{created, added(0, "fc_1", "call_1", "f"), argsDone(0, "fc_1", `"x"`), completed()},
		calls:  []synthCall{{id: "call_1", name: "f", raw: `"x"`, at: 2, errHas: "tool arguments are a JSON string, not an object"}},
		stop:   "completed",
	},
	{
		name:   "a call with no name is not runnable",
		events: []string{created, itemDone(0, fnItem("fc_1", "call_1", "", "completed", ptr(`{}`))), completed()},
		calls:  []synthCall{{id: "call_1", raw: `{}`, at: 1, errHas: "tool call has no name"}},
		stop:   "completed",
	},
	{
		name: "interleaved items are reported in seq order",
		events: []string{created, added(0, "fc_1", "call_1", "f"), added(1, "fc_2", "call_2", "g"),
			delta(1, "fc_2", `{"b":2}`), argsDone(1, "fc_2", `{"b":2}`), itemDone(1, fnItem("fc_2", "call_2", "g", "completed", ptr(`{"b": 2}`))),
			delta(0, "fc_1", `{"a":1}`), argsDone(0, "fc_1", `{"a":1}`), completed()},
		calls: []synthCall{
			{id: "call_1", name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 7},
			{id: "call_2", name: "g", raw: `{"b":2}`, input: `{"b":2}`, complete: true, at: 4},
		},
		stop: "completed",
	},
	{
		name: "a held call is reported at the end behind an incomplete one",
		events: []string{created, added(0, "fc_1", "call_1", "f"), added(1, "fc_2", "call_2", "g"),
			argsDone(1, "fc_2", `{}`), delta(0, "fc_1", `{"a"`), incomplete("max_output_tokens")},
		calls: []synthCall{
			{id: "call_1", name: "f", raw: `{"a"`, at: 5, errHas: "(stop reason max_output_tokens)"},
			{id: "call_2", name: "g", raw: `{}`, input: `{}`, complete: true, at: 3},
		},
		stop: "max_output_tokens",
	},
	{
		name:   "a function_call only in the response.completed output",
		events: []string{created, completed(`{"id":"rs_1","type":"reasoning","summary":[]}`, fnItem("fc_1", "call_1", "f", "completed", ptr(`{"x": [1]}`)))},
		calls:  []synthCall{{id: "call_1", name: "f", raw: `{"x": [1]}`, input: `{"x":[1]}`, complete: true, at: 1}},
		stop:   "completed",
	},
	{
		name: "the final output completes an open call, and reports none twice",
		events: []string{created, added(0, "fc_1", "call_1", "f"), argsDone(0, "fc_1", `{"a":1}`), added(1, "fc_2", "call_2", "g"), delta(1, "fc_2", `{"b"`),
			completed(fnItem("fc_1", "call_1", "f", "completed", ptr(`{"a":1}`)), fnItem("fc_2", "call_2", "g", "completed", ptr(`{"b":2}`)))},
		calls: []synthCall{
			{id: "call_1", name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 2},
			{id: "call_2", name: "g", raw: `{"b":2}`, input: `{"b":2}`, complete: true, at: 5},
		},
		stop: "completed",
	},
	{
		name:   "an item of the final output that is not completed stays incomplete",
		events: []string{created, added(0, "fc_1", "call_1", "f"), completed(fnItem("fc_1", "call_1", "f", "incomplete", ptr(`{"a"`)))},
		calls:  []synthCall{{id: "call_1", name: "f", raw: `{"a"`, at: 2, errHas: "(stop reason completed)"}},
		stop:   "completed",
	},
	{
		name: "bare data lines without sequence_number, CRLF, padding, [DONE] and comments",
		events: []string{
			"data:{\"type\":\"response.created\",\"response\":{\"id\":\"resp_2\",\"output\":[]}}\r\n\r\n",
			": keepalive\n\n",
			"data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"fc_1\",\"type\":\"function_call\",\"arguments\":\"\",\"call_id\":\"call_1\",\"name\":\"f\"}}    \r\n\r\n",
			"data:\n\n",
			"data: {\"type\":\"response.function_call_arguments.done\",\"output_index\":0,\"item_id\":\"fc_1\",\"arguments\":\"{\\\"k\\\":\\\"v\\\"}\"}\n\n",
			"data: [DONE]\n\n",
			"data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_2\",\"status\":\"completed\",\"output\":[]}}",
		},
		calls: []synthCall{{id: "call_1", name: "f", raw: `{"k":"v"}`, input: `{"k":"v"}`, complete: true, at: 4}},
		stop:  "completed",
	},
	{
		name:   "bad JSON stops parsing",
		events: []string{created, added(0, "fc_1", "call_1", "f"), `data: {"type":"response.output_text.delta",]` + "\n\n", argsDone(0, "fc_1", `{}`), completed()},
		calls:  []synthCall{{id: "call_1", name: "f", at: 2, errHas: "bad event data"}},
		endErr: "bad event data at bytes {1}-{2}: invalid character ']' looking for beginning of object key string (after 38 bytes of the data)",
	},
	{
		name: "a wrong-typed field in a function call event stops parsing",
		events: []string{created, added(0, "fc_1", "call_1", "f"),
			ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":7}`), completed()},
		calls:  []synthCall{{id: "call_1", name: "f", at: 2, errHas: "bad response.function_call_arguments.delta event"}},
		endErr: "bad response.function_call_arguments.delta event at bytes {1}-{2}: json: cannot use number value for field delta",
	},
	{
		name: "a wrong-typed field elsewhere is harmless",
		events: []string{created,
			ev("response.output_text.delta", `{"type":"response.output_text.delta","item_id":5,"delta":{"odd":true},"output_index":"x"}`),
			ev("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","name":7}}`),
			added(1, "fc_1", "call_1", "f"), argsDone(1, "fc_1", `{}`), completed()},
		calls: []synthCall{{id: "call_1", name: "f", raw: `{}`, input: `{}`, complete: true, at: 4}},
		stop:  "completed",
	},
	{
		name:   "an item whose type cannot be read stops parsing",
		events: []string{created, ev("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":["function_call"]}}`), completed()},
		endErr: "bad response.output_item.done event at bytes {0}-{1}",
	},
	{
		name:   "nothing after response.completed is read",
		events: []string{created, completed(), added(0, "fc_1", "call_1", "f"), argsDone(0, "fc_1", `{}`), "garbage"},
		stop:   "completed",
	},
}

func TestSynthetic(t *testing.T) {
	for _, tt := range synthCases {
		t.Run(tt.name, func(t *testing.T) {
			data, ends := frame(tt.events)
			expand := func(s string) string {
				s = strings.ReplaceAll(s, "{len}", strconv.Itoa(len(data)))
				for i := len(ends) - 1; i >= 0; i-- {
					s = strings.ReplaceAll(s, "{"+strconv.Itoa(i)+"}", strconv.FormatInt(ends[i], 10))
				}
				return s
			}
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
					wantID := w.id
					if wantID == "" {
						wantID = c.ID // synthesized; TestSyntheticID checks those
						if !strings.HasPrefix(c.ID, "call_synth_") {
							t.Errorf("%s: call %d ID %q, want a synthesized one", feed.name, i, c.ID)
						}
					}
					if c.ID != wantID || c.Name != w.name || c.RawInput != w.raw || c.Complete != w.complete ||
						!bytes.Equal(c.Input, wantInput) || c.At != wantAt {
						t.Errorf("%s: call %d = %+v (Input %s)\nwant ID %q Name %q RawInput %q Complete %v Input %s At %d",
							feed.name, i, c, c.Input, wantID, w.name, w.raw, w.complete, wantInput, wantAt)
					}
					errHas := expand(w.errHas)
					if (errHas == "") != (c.Err == "") || !strings.Contains(c.Err, errHas) {
						t.Errorf("%s: call %d Err = %q, want it to contain %q", feed.name, i, c.Err, errHas)
					}
				}
				end := res.Ends[0]
				if end.StopReason != tt.stop {
					t.Errorf("%s: StopReason = %q, want %q", feed.name, end.StopReason, tt.stop)
				}
				endErr := expand(tt.endErr)
				if (endErr == "") != (end.Err == "") || !strings.Contains(end.Err, endErr) {
					t.Errorf("%s: End.Err = %q, want it to contain %q", feed.name, end.Err, endErr)
				}
			}
		})
	}
}

func TestSyntheticID(t *testing.T) {
	noID := func(resp, input string) []byte {
		data, _ := frame([]string{
			ev("response.created", `{"type":"response.created","response":{"id":`+js(resp)+`,"output":[]}}`),
			itemDone(0, fnItem("", "", "f", "completed", ptr(input))), completed()})
		return data
	}
	id := func(data []byte) string {
		t.Helper()
		res := parse(t, bytes.NewReader(data))
		if len(res.Calls) != 1 || !res.Calls[0].Complete {
			t.Fatalf("got %+v, want one complete call", res.Calls)
		}
		return res.Calls[0].ID
	}
	a := id(noID("resp_1", `{"x":1}`))
	if !strings.HasPrefix(a, "call_synth_") || len(a) != len("call_synth_")+24 {
		t.Errorf("synthesized id %q, want call_synth_ and 24 hex digits", a)
	}
	if b := id(noID("resp_1", `{"x":1}`)); b != a {
		t.Errorf("same stream gave ids %q and %q", a, b)
	}
	if b := id(noID("resp_2", `{"x":1}`)); b == a {
		t.Errorf("another response gave the same id %q", a)
	}
	if b := id(noID("resp_1", `{"x":2}`)); b == a {
		t.Errorf("another input gave the same id %q", a)
	}
}

// TestLongEvents checks output_item.done and response.completed events far
// over bufio.Scanner's 64 KiB default (openai/openai-go#368), fed one byte
// at a time too.
func TestLongEvents(t *testing.T) {
	long := strings.Repeat("héllo wörld ", 20000)
	in := `{"text":` + js(long) + `}`
	item := fnItem("fc_1", "call_1", "write", "completed", ptr(in))
	data, ends := frame([]string{created, added(0, "fc_1", "call_1", "write"), itemDone(0, item), completed(item)})
	if ends[2]-ends[1] < 128<<10 {
		t.Fatalf("output_item.done is only %d bytes", ends[2]-ends[1])
	}
	for _, r := range []io.Reader{bytes.NewReader(data), iotest.OneByteReader(bytes.NewReader(data))} {
		res := parse(t, r)
		if len(res.Calls) != 1 || !res.Calls[0].Complete || res.Calls[0].RawInput != in || res.Calls[0].At != ends[2] {
			t.Fatalf("got %d calls: %.200v", len(res.Calls), res.Calls)
		}
		if res.Ends[0] != (modelstream.End{Calls: 1, StopReason: "completed"}) {
			t.Fatalf("End = %+v", res.Ends[0])
		}
	}
}

func TestHandlerErrorStops(t *testing.T) {
	data, _ := frame([]string{created, itemDone(0, fnItem("fc_1", "call_1", "f", "completed", ptr("{}"))),
		itemDone(1, fnItem("fc_2", "call_2", "g", "completed", ptr("{}"))), completed()})
	streamtest.CheckHandlerErrorStops(t, New(), data)
}

func TestContextCancelled(t *testing.T) {
	data, _ := frame([]string{created, itemDone(0, fnItem("fc_1", "call_1", "f", "completed", ptr("{}"))),
		itemDone(1, fnItem("fc_2", "call_2", "g", "completed", ptr("{}"))), completed()})
	streamtest.CheckContextCancelled(t, New(), data)
}

func TestReadError(t *testing.T) {
	data, ends := frame([]string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"a":`)})
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
