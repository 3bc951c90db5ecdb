package openairesponses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

// addedItem and doneItem frame output_item.added and .done for any item, as raw JSON.
func addedItem(oi int, item string) string {
	return ev("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","sequence_number":1,"output_index":%d,"item":%s}`, oi, item))
}

func doneItem(oi int, item string) string { return itemDone(oi, item) }

// customItem is a custom_tool_call item; input nil leaves it out.
func customItem(itemID, callID, name, status string, input *string) string {
	f := []string{`"type":"custom_tool_call"`, `"id":` + js(itemID), `"call_id":` + js(callID), `"name":` + js(name)}
	if status != "" {
		f = append(f, `"status":`+js(status))
	}
	if input != nil {
		f = append(f, `"input":`+js(*input))
	}
	return "{" + strings.Join(f, ",") + "}"
}

func customDelta(oi int, itemID, d string) string {
	return ev("response.custom_tool_call_input.delta", fmt.Sprintf(`{"type":"response.custom_tool_call_input.delta","sequence_number":2,"item_id":%s,"output_index":%d,"delta":%s}`,
		js(itemID), oi, js(d)))
}

func customDone(oi int, itemID, input string) string {
	return ev("response.custom_tool_call_input.done", fmt.Sprintf(`{"type":"response.custom_tool_call_input.done","sequence_number":3,"item_id":%s,"output_index":%d,"input":%s}`,
		js(itemID), oi, js(input)))
}

const (
	localShellAction = `{"type":"exec","command":["ls","-la"],"env":{"A":"1"},"timeout_ms":5000,"working_directory":"/tmp"}`
	shellAction      = `{"commands":["ls -la","pwd"],"max_output_length":1000,"timeout_ms":null}`
	patchOperation   = `{"type":"update_file","path":"a.go","diff":"@@\n-x\n+y\n"}`
)

func localShellItem(status, action string) string {
	item := `{"id":"lsh_1","type":"local_shell_call","status":` + js(status) + `,"call_id":"call_ls"`
	if action != "" {
		item += `,"action":` + action
	}
	return item + "}"
}

func shellItem(status, action, env string) string {
	item := `{"id":"sh_1","type":"shell_call","status":` + js(status) + `,"call_id":"call_sh","action":` + action
	if env != "" {
		item += `,"environment":` + env
	}
	return item + "}"
}

func patchItem(status, op string) string {
	return `{"id":"apc_1","type":"apply_patch_call","status":` + js(status) + `,"call_id":"call_ap","operation":` + op + `}`
}

func toolSearchItem(callID, status, execution, args string) string {
	return `{"id":"tsc_1","type":"tool_search_call","status":` + js(status) + `,"arguments":` + args + `,"call_id":` + callID + `,"execution":` + js(execution) + `}`
}

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
type synthCall = streamtest.WantCall

type synthCase = streamtest.Case

var synthCases = []synthCase{
	{
		Name: "reported at arguments.done, not again at output_item.done",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"a":`), delta(0, "fc_1", `1}`),
			argsDone(0, "fc_1", `{"a":1}`), itemDone(0, fnItem("fc_1", "call_1", "f", "completed", ptr(`{"a":1}`))),
			completed(fnItem("fc_1", "call_1", "f", "completed", ptr(`{"a":1}`)))},
		Calls: []synthCall{{ID: "call_1", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 4}},
		Stop:  "completed",
	},
	{
		Name: "without arguments.done, reported at output_item.done",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"a":1}`),
			itemDone(0, fnItem("fc_1", "call_1", "f", "completed", ptr(`{"a":1}`))), completed()},
		Calls: []synthCall{{ID: "call_1", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 3}},
		Stop:  "completed",
	},
	{
		Name:   "output_item.done alone is self-contained",
		Events: []string{created, itemDone(0, fnItem("fc_1", "call_1", "f", "completed", ptr(`{"q": "x"}`))), completed()},
		Calls:  []synthCall{{ID: "call_1", Name: "f", Raw: `{"q": "x"}`, Input: `{"q":"x"}`, Complete: true, At: 1}},
		Stop:   "completed",
	},
	{
		Name: "output_item.done without arguments uses the deltas",
		Events: []string{created, added(0, "fc_1", "call_1", "f"),
			// Raw bytes: a UTF-8 sequence split between two deltas.
			ev("response.function_call_arguments.delta", "{\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_1\",\"output_index\":0,\"delta\":\"{\\\"e\\\":\\\"\xf0\x9f\"}"),
			ev("response.function_call_arguments.delta", "{\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_1\",\"output_index\":0,\"delta\":\"\x98\x80\\\"}\"}"),
			itemDone(0, fnItem("fc_1", "call_1", "f", "completed", nil)), completed()},
		Calls: []synthCall{{ID: "call_1", Name: "f", Raw: `{"e":"😀"}`, Input: `{"e":"😀"}`, Complete: true, At: 4}},
		Stop:  "completed",
	},
	{
		Name: "escaped surrogate pair split between deltas",
		Events: []string{created, added(0, "fc_1", "call_1", "f"),
			ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"e\":\"\ud83d"}`),
			ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"\ude00\"}"}`),
			itemDone(0, fnItem("fc_1", "call_1", "f", "completed", nil)), completed()},
		Calls: []synthCall{{ID: "call_1", Name: "f", Raw: `{"e":"😀"}`, Input: `{"e":"😀"}`, Complete: true, At: 4}},
		Stop:  "completed",
	},
	{
		Name: "arguments.done before any name waits for output_item.done",
		Events: []string{created, delta(0, "fc_1", `{}`), argsDone(0, "fc_1", `{}`),
			itemDone(0, fnItem("fc_1", "call_1", "f", "completed", ptr(`{}`))), completed()},
		Calls: []synthCall{{ID: "call_1", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 3}},
		Stop:  "completed",
	},
	{
		Name:   "arguments.done that names the function",
		Events: []string{created, delta(0, "fc_1", `{}`), ev("response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":0,"name":"g","arguments":"{}"}`), completed()},
		Calls:  []synthCall{{ID: "fc_1", Name: "g", Raw: `{}`, Input: `{}`, Complete: true, At: 2}},
		Stop:   "completed",
	},
	{
		Name: "call_id missing: the item id is the call id",
		Events: []string{created, added(0, "fc_1", "", "f"), argsDone(0, "fc_1", `{}`),
			itemDone(0, fnItem("fc_1", "", "f", "completed", ptr(`{}`))), completed()},
		Calls: []synthCall{{ID: "fc_1", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 2}},
		Stop:  "completed",
	},
	{
		Name: "no ids at all: items matched by output_index, id synthesized",
		Events: []string{created, added(3, "", "", "f"), ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","output_index":3,"delta":"{}"}`),
			itemDone(3, fnItem("", "", "f", "completed", nil)), completed()},
		Calls: []synthCall{{Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 3}},
		Stop:  "completed",
	},
	{
		Name: "reasoning, message and server-side items are not calls",
		Events: []string{created, reasoningAdded, reasoningDone, textDelta, messageDone,
			ev("response.output_item.added", `{"type":"response.output_item.added","output_index":2,"item":{"id":"mcp_1","type":"mcp_call","name":"search","arguments":"","server_label":"s"}}`),
			ev("response.mcp_call_arguments.delta", `{"type":"response.mcp_call_arguments.delta","output_index":2,"item_id":"mcp_1","delta":"{}"}`),
			ev("response.mcp_call_arguments.done", `{"type":"response.mcp_call_arguments.done","output_index":2,"item_id":"mcp_1","arguments":"{}"}`),
			ev("response.output_item.done", `{"type":"response.output_item.done","output_index":2,"item":{"id":"mcp_1","type":"mcp_call","name":"search","arguments":"{}","output":"ok"}}`),
			added(3, "fc_1", "call_1", "f"), argsDone(3, "fc_1", `{"z":null}`), completed()},
		Calls: []synthCall{{ID: "call_1", Name: "f", Raw: `{"z":null}`, Input: `{"z":null}`, Complete: true, At: 10}},
		Stop:  "completed",
	},
	{
		Name: "custom_tool_call: free-form input from its deltas, complete at custom_tool_call_input.done",
		Events: []string{created, addedItem(0, customItem("ctc_1", "call_c", "apply_diff", "in_progress", ptr(""))),
			customDelta(0, "ctc_1", "*** Begin Patch\n"), customDelta(0, "ctc_1", `say "<hi>" é`),
			customDone(0, "ctc_1", "*** Begin Patch\n"+`say "<hi>" é`),
			doneItem(0, customItem("ctc_1", "call_c", "apply_diff", "completed", ptr("*** Begin Patch\n"+`say "<hi>" é`))), completed()},
		Calls: []synthCall{{ID: "call_c", Name: "apply_diff", Raw: "*** Begin Patch\n" + `say "<hi>" é`,
			Input: `{"input":"*** Begin Patch\nsay \"<hi>\" é"}`, Complete: true, At: 4}},
		Stop: "completed",
	},
	{
		Name: "custom_tool_call without input.done is complete at output_item.done; blank input is kept as it is",
		Events: []string{created, addedItem(0, customItem("ctc_1", "call_c", "noop", "in_progress", ptr(""))),
			doneItem(0, customItem("ctc_1", "call_c", "noop", "completed", ptr(""))), completed()},
		Calls: []synthCall{{ID: "call_c", Name: "noop", Input: `{"input":""}`, Complete: true, At: 2}},
		Stop:  "completed",
	},
	{
		Name: "local_shell_call, shell_call and apply_patch_call are calls named after their tools, complete at output_item.done",
		Events: []string{created,
			addedItem(0, localShellItem("in_progress", `{"type":"exec","command":[],"env":{}}`)), doneItem(0, localShellItem("completed", localShellAction)),
			addedItem(1, shellItem("in_progress", `{"commands":[]}`, "")),
			ev("response.shell_call_command.added", `{"type":"response.shell_call_command.added","output_index":1,"command_index":0,"command":""}`),
			ev("response.shell_call_command.delta", `{"type":"response.shell_call_command.delta","output_index":1,"command_index":0,"delta":"ls"}`),
			doneItem(1, shellItem("completed", shellAction, `{"type":"local"}`)),
			addedItem(2, patchItem("in_progress", `{"type":"update_file","path":"a.go","diff":""}`)),
			ev("response.apply_patch_call_operation_diff.delta", `{"type":"response.apply_patch_call_operation_diff.delta","item_id":"apc_1","output_index":2,"delta":"@@"}`),
			doneItem(2, patchItem("completed", patchOperation)), completed()},
		Calls: []synthCall{
			{ID: "call_ls", Name: "local_shell", Raw: localShellAction, Input: localShellAction, Complete: true, At: 2},
			{ID: "call_sh", Name: "shell", Raw: shellAction, Input: shellAction, Complete: true, At: 6},
			{ID: "call_ap", Name: "apply_patch", Raw: patchOperation, Input: patchOperation, Complete: true, At: 9},
		},
		Stop: "completed",
	},
	{
		Name: "tool_search_call executed by the client is a call; by the server, and a hosted shell_call, are not",
		Events: []string{created,
			addedItem(0, toolSearchItem("null", "in_progress", "server", `{}`)), doneItem(0, toolSearchItem("null", "completed", "server", `{"paths":["x"]}`)),
			addedItem(1, shellItem("in_progress", `{"commands":[]}`, `{"type":"container_reference","container_id":"cntr_1"}`)),
			doneItem(1, shellItem("completed", shellAction, `{"type":"container_reference","container_id":"cntr_1"}`)),
			addedItem(2, toolSearchItem(`"call_ts"`, "in_progress", "client", `{}`)),
			doneItem(2, toolSearchItem(`"call_ts"`, "completed", "client", `{"goal": "weather"}`)),
			completed()},
		Calls: []synthCall{{ID: "call_ts", Name: "tool_search", Raw: `{"goal": "weather"}`, Input: `{"goal":"weather"}`, Complete: true, At: 6}},
		Stop:  "completed",
	},
	{
		Name:   "tool_search_call arguments sent as a JSON string are read as function arguments are",
		Events: []string{created, doneItem(0, toolSearchItem(`"call_ts"`, "completed", "client", js(`{"goal":"x"}`))), completed()},
		Calls:  []synthCall{{ID: "call_ts", Name: "tool_search", Raw: `{"goal":"x"}`, Input: `{"goal":"x"}`, Complete: true, At: 1}},
		Stop:   "completed",
	},
	{
		Name: "the call_id of output_item.done replaces the one output_item.added gave",
		Events: []string{created, addedItem(0, toolSearchItem(`"call_added"`, "in_progress", "client", `{}`)),
			doneItem(0, toolSearchItem(`"call_done"`, "completed", "client", `{}`)), completed()},
		Calls: []synthCall{{ID: "call_done", Name: "tool_search", Raw: `{}`, Input: `{}`, Complete: true, At: 2}},
		Stop:  "completed",
	},
	{
		Name:   "a local_shell_call without its action is not runnable",
		Events: []string{created, doneItem(0, localShellItem("completed", "")), completed()},
		Calls:  []synthCall{{ID: "call_ls", Name: "local_shell", At: 1, ErrHas: "local_shell_call item has no action"}},
		Stop:   "completed",
	},
	{
		Name:   "an apply_patch_call whose operation is not an object is not runnable",
		Events: []string{created, doneItem(0, patchItem("completed", `"x"`)), completed()},
		Calls:  []synthCall{{Ended: true, ID: "call_ap", Name: "apply_patch", Raw: `"x"`, At: 1, ErrHas: "tool input (the apply_patch_call operation) is a JSON string, not an object"}},
		Stop:   "completed",
	},
	{
		Name: "an item whose output_item.done says incomplete is not runnable",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"a":1}`),
			itemDone(0, fnItem("fc_1", "call_1", "f", "incomplete", ptr(`{"a":1}`))), doneItem(1, shellItem("incomplete", shellAction, "")), incomplete("max_output_tokens")},
		Calls: []synthCall{
			{ID: "call_1", Name: "f", Raw: `{"a":1}`, At: 3, ErrHas: "tool call incomplete: the function_call item's status is incomplete"},
			{ID: "call_sh", Name: "shell", Raw: shellAction, At: 4, ErrHas: "tool call incomplete: the shell_call item's status is incomplete"},
		},
		Stop: "max_output_tokens",
	},
	{
		Name: "client items only in the response.completed output, in output order",
		Events: []string{created, completed(patchItem("completed", patchOperation), `{"id":"msg_1","type":"message","content":[]}`,
			customItem("ctc_1", "call_c", "sql", "completed", ptr("SELECT 1")), localShellItem("incomplete", localShellAction))},
		Calls: []synthCall{
			{ID: "call_ap", Name: "apply_patch", Raw: patchOperation, Input: patchOperation, Complete: true, At: 1},
			{ID: "call_c", Name: "sql", Raw: "SELECT 1", Input: `{"input":"SELECT 1"}`, Complete: true, At: 1},
			{ID: "call_ls", Name: "local_shell", Raw: localShellAction, At: 1, ErrHas: "(stop reason completed)"},
		},
		Stop: "completed",
	},
	{
		Name:   "response.incomplete with max_output_tokens cuts the open call off",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"path":"/tm`), incomplete("max_output_tokens")},
		Calls: []synthCall{{ID: "call_1", Name: "f", Raw: `{"path":"/tm`, At: 3,
			ErrHas: "tool call incomplete: the stream ended before the function_call item was complete (stop reason max_output_tokens)"}},
		Stop: "max_output_tokens",
	},
	{
		Name: "response.incomplete after a complete call, without details",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), argsDone(0, "fc_1", `{}`),
			added(1, "fc_2", "call_2", "g"), delta(1, "fc_2", `{`), incomplete("")},
		Calls: []synthCall{
			{ID: "call_1", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 2},
			{ID: "call_2", Name: "g", Raw: `{`, At: 5, ErrHas: "(stop reason incomplete)"},
		},
		Stop: "incomplete",
	},
	{
		Name: "error event, then response.failed",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"a":`),
			ev("error", `{"type":"error","sequence_number":2,"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"You exceeded your current quota.","param":null}}`),
			failed("insufficient_quota", "You exceeded your current quota.")},
		Calls:  []synthCall{{ID: "call_1", Name: "f", Raw: `{"a":`, At: 3, ErrHas: "(error event at bytes {2}-{3}: insufficient_quota: You exceeded your current quota.)"}},
		EndErr: "error event at bytes {2}-{3}: insufficient_quota: You exceeded your current quota.",
	},
	{
		Name:   "error event with code and message at the top level",
		Events: []string{created, `data: {"type":"error","code":"ERR_SOMETHING","message":"Something went wrong","param":null}` + "\n\n"},
		EndErr: "error event at bytes {0}-{1}: ERR_SOMETHING: Something went wrong",
	},
	{
		Name:   "response.failed alone",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), failed("rate_limit_exceeded", "Request too large.")},
		Calls:  []synthCall{{ID: "call_1", Name: "f", At: 2, ErrHas: "(stop reason failed; response.failed at bytes {1}-{2}: rate_limit_exceeded: Request too large.)"}},
		Stop:   "failed",
		EndErr: "response.failed at bytes {1}-{2}: rate_limit_exceeded: Request too large.",
	},
	{
		Name:   "gateway error without a type",
		Events: []string{created, `data: {"error":{"message":"quota exceeded","code":429}}` + "\n\n"},
		EndErr: "error event at bytes {0}-{1}: 429: quota exceeded",
	},
	{
		Name:   "error event with text data",
		Events: []string{created, "event: error\ndata: upstream connect error\n\n"},
		EndErr: `error event at bytes {0}-{1}: "upstream connect error"`,
	},
	{
		Name:   "error event without data",
		Events: []string{created, "event: error\n\n"},
		EndErr: "error event at bytes {0}-{1}: no data",
	},
	{
		Name:   "EOF before a final event: truncated",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"a":1}`)},
		Calls: []synthCall{{ID: "call_1", Name: "f", Raw: `{"a":1}`, At: -1,
			ErrHas: "tool call incomplete: the stream ended before the function_call item was complete (stream truncated at byte {len}"}},
		EndErr: "stream truncated at byte {len}: it ended before response.completed, response.incomplete or response.failed",
	},
	{
		Name:   "EOF after a complete call",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), argsDone(0, "fc_1", `{}`), itemDone(0, fnItem("fc_1", "call_1", "f", "completed", ptr(`{}`)))},
		Calls:  []synthCall{{ID: "call_1", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 2}},
		EndErr: "stream truncated at byte {len}",
	},
	{
		Name:   "EOF mid-event",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), `data: {"type":"response.function_call_arguments.delta","item_id":"fc_1","del`},
		Calls:  []synthCall{{ID: "call_1", Name: "f", At: -1, ErrHas: "bad event data"}},
		EndErr: "bad event data at bytes {1}-{len}: unexpected end of JSON input",
	},
	{
		Name:   "empty input",
		EndErr: "stream truncated at byte 0",
	},
	{
		Name: "arguments.done wins over the deltas",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"a":`), delta(0, "fc_1", `"lost`),
			argsDone(0, "fc_1", `{"a": "final"}`), completed()},
		Calls: []synthCall{{ID: "call_1", Name: "f", Raw: `{"a": "final"}`, Input: `{"a":"final"}`, Complete: true, At: 4}},
		Stop:  "completed",
	},
	{
		Name:   "blank arguments are {}",
		Events: []string{created, added(0, "fc_1", "call_1", "noargs"), argsDone(0, "fc_1", ""), completed()},
		Calls:  []synthCall{{ID: "call_1", Name: "noargs", Input: `{}`, Complete: true, At: 2}},
		Stop:   "completed",
	},
	{
		Name:   "bad JSON arguments",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), argsDone(0, "fc_1", `{"a": 1, oops}`), completed()},
		Calls: []synthCall{{Ended: true, ID: "call_1", Name: "f", Raw: `{"a": 1, oops}`, At: 2,
			ErrHas: "tool arguments are not valid JSON: invalid character 'o' looking for beginning of object key string (after 10 bytes of the arguments)"}},
		Stop: "completed",
	},
	{
		Name:   "arguments that are not an object",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), argsDone(0, "fc_1", `"x"`), completed()},
		Calls:  []synthCall{{Ended: true, ID: "call_1", Name: "f", Raw: `"x"`, At: 2, ErrHas: "tool arguments are a JSON string, not an object"}},
		Stop:   "completed",
	},
	{
		Name:   "a call with no name is not runnable",
		Events: []string{created, itemDone(0, fnItem("fc_1", "call_1", "", "completed", ptr(`{}`))), completed()},
		Calls:  []synthCall{{ID: "call_1", Raw: `{}`, At: 1, ErrHas: "tool call has no name"}},
		Stop:   "completed",
	},
	{
		Name: "interleaved items are reported in seq order",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), added(1, "fc_2", "call_2", "g"),
			delta(1, "fc_2", `{"b":2}`), argsDone(1, "fc_2", `{"b":2}`), itemDone(1, fnItem("fc_2", "call_2", "g", "completed", ptr(`{"b": 2}`))),
			delta(0, "fc_1", `{"a":1}`), argsDone(0, "fc_1", `{"a":1}`), completed()},
		Calls: []synthCall{
			{ID: "call_1", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 7},
			{ID: "call_2", Name: "g", Raw: `{"b":2}`, Input: `{"b":2}`, Complete: true, At: 4},
		},
		Stop: "completed",
	},
	{
		Name: "a held call is reported at the end behind an incomplete one",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), added(1, "fc_2", "call_2", "g"),
			argsDone(1, "fc_2", `{}`), delta(0, "fc_1", `{"a"`), incomplete("max_output_tokens")},
		Calls: []synthCall{
			{ID: "call_1", Name: "f", Raw: `{"a"`, At: 5, ErrHas: "(stop reason max_output_tokens)"},
			{ID: "call_2", Name: "g", Raw: `{}`, Input: `{}`, Complete: true, At: 3},
		},
		Stop: "max_output_tokens",
	},
	{
		Name:   "a function_call only in the response.completed output",
		Events: []string{created, completed(`{"id":"rs_1","type":"reasoning","summary":[]}`, fnItem("fc_1", "call_1", "f", "completed", ptr(`{"x": [1]}`)))},
		Calls:  []synthCall{{ID: "call_1", Name: "f", Raw: `{"x": [1]}`, Input: `{"x":[1]}`, Complete: true, At: 1}},
		Stop:   "completed",
	},
	{
		Name: "the final output completes an open call, and reports none twice",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), argsDone(0, "fc_1", `{"a":1}`), added(1, "fc_2", "call_2", "g"), delta(1, "fc_2", `{"b"`),
			completed(fnItem("fc_1", "call_1", "f", "completed", ptr(`{"a":1}`)), fnItem("fc_2", "call_2", "g", "completed", ptr(`{"b":2}`)))},
		Calls: []synthCall{
			{ID: "call_1", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 2},
			{ID: "call_2", Name: "g", Raw: `{"b":2}`, Input: `{"b":2}`, Complete: true, At: 5},
		},
		Stop: "completed",
	},
	{
		Name:   "an item of the final output that is not completed stays incomplete",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), completed(fnItem("fc_1", "call_1", "f", "incomplete", ptr(`{"a"`)))},
		Calls:  []synthCall{{ID: "call_1", Name: "f", Raw: `{"a"`, At: 2, ErrHas: "(stop reason completed)"}},
		Stop:   "completed",
	},
	{
		Name: "bare data lines without sequence_number, CRLF, padding, [DONE] and comments",
		Events: []string{
			"data:{\"type\":\"response.created\",\"response\":{\"id\":\"resp_2\",\"output\":[]}}\r\n\r\n",
			": keepalive\n\n",
			"data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"fc_1\",\"type\":\"function_call\",\"arguments\":\"\",\"call_id\":\"call_1\",\"name\":\"f\"}}    \r\n\r\n",
			"data:\n\n",
			"data: {\"type\":\"response.function_call_arguments.done\",\"output_index\":0,\"item_id\":\"fc_1\",\"arguments\":\"{\\\"k\\\":\\\"v\\\"}\"}\n\n",
			"data: [DONE]\n\n",
			"data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_2\",\"status\":\"completed\",\"output\":[]}}",
		},
		Calls: []synthCall{{ID: "call_1", Name: "f", Raw: `{"k":"v"}`, Input: `{"k":"v"}`, Complete: true, At: 4}},
		Stop:  "completed",
	},
	{
		Name: "an unreadable event that cannot hold a call is skipped, counted and described",
		Events: []string{
			ev("response.created", `{"type":"response.created","response":{"id":"resp_1",]}`),
			added(0, "fc_1", "call_1", "f"),
			`data: {"type":"response.output_text.delta",]` + "\n\n",
			ev("response.in_progress", `{"type":`),
			argsDone(0, "fc_1", `{}`), completed()},
		Calls:    []synthCall{{ID: "call_1", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 4}},
		Stop:     "completed",
		Warnings: 3,
		Warning:  "skipped unreadable response.created event at bytes 0-{0}: invalid character ']' looking for beginning of object key string (after 54 bytes of the data)",
	},
	{
		Name:   "an unreadable event of a call fails the stream",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta",]`), argsDone(0, "fc_1", `{}`), completed()},
		Calls:  []synthCall{{ID: "call_1", Name: "f", At: 2, ErrHas: "bad event data"}},
		EndErr: "bad event data at bytes {1}-{2}: invalid character ']' looking for beginning of object key string (after 50 bytes of the data)",
	},
	{
		Name:   "an unreadable event of no known type fails the stream",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), `data: {"item_id":"fc_1",]` + "\n\n", argsDone(0, "fc_1", `{}`), completed()},
		Calls:  []synthCall{{ID: "call_1", Name: "f", At: 2, ErrHas: "bad event data"}},
		EndErr: "bad event data at bytes {1}-{2}",
	},
	{
		Name:   "an unreadable final event fails the stream",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), argsDone(0, "fc_1", `{}`), ev("response.completed", `{"type":"response.completed","response":{`)},
		Calls:  []synthCall{{ID: "call_1", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 2}},
		EndErr: "bad event data at bytes {2}-{3}: unexpected end of JSON input",
	},
	{
		Name: "a wrong-typed field in a function call event stops parsing",
		Events: []string{created, added(0, "fc_1", "call_1", "f"),
			ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":7}`), completed()},
		Calls:  []synthCall{{ID: "call_1", Name: "f", At: 2, ErrHas: "bad response.function_call_arguments.delta event"}},
		EndErr: "bad response.function_call_arguments.delta event at bytes {1}-{2}: json: cannot use number value for field delta",
	},
	{
		Name: "a wrong-typed field elsewhere is harmless",
		Events: []string{created,
			ev("response.output_text.delta", `{"type":"response.output_text.delta","item_id":5,"delta":{"odd":true},"output_index":"x"}`),
			ev("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","name":7}}`),
			added(1, "fc_1", "call_1", "f"), argsDone(1, "fc_1", `{}`), completed()},
		Calls: []synthCall{{ID: "call_1", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 4}},
		Stop:  "completed",
	},
	{
		Name:   "an item whose type cannot be read stops parsing",
		Events: []string{created, ev("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":["function_call"]}}`), completed()},
		EndErr: "bad response.output_item.done event at bytes {0}-{1}",
	},
	{
		Name:   "an event after response.completed fails the stream instead of being dropped",
		Events: []string{created, completed(), added(0, "fc_1", "call_1", "f"), argsDone(0, "fc_1", `{}`), "garbage"},
		Stop:   "completed",
		EndErr: "stream continues after response.completed: another event at bytes {1}-{2}",
	},
	{
		Name:   "an event after response.incomplete fails the stream too",
		Events: []string{created, added(0, "fc_1", "call_1", "f"), incomplete("max_output_tokens"), created},
		Calls:  []synthCall{{ID: "call_1", Name: "f", At: 2, ErrHas: "(stop reason max_output_tokens)"}},
		Stop:   "max_output_tokens",
		EndErr: "stream continues after response.incomplete: another event at bytes {2}-{3}",
	},
	{
		Name:   "[DONE], comments and blank data after response.completed are harmless",
		Events: []string{created, completed(), "data: [DONE]\n\n", ": keepalive\n\n", "data:\n\n"},
		Stop:   "completed",
	},
}

func TestSynthetic(t *testing.T) {
	streamtest.RunCases(t, parse, frame, synthCases, streamtest.CaseOpts{SynthID: synthID})
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
	data, _ := frame([]string{created, added(0, "fc_1", "call_1", "f"), delta(0, "fc_1", `{"a":`)})
	res, want := streamtest.CheckReadError(t, New(), data, contract)
	if len(res.Calls) != 1 || res.Calls[0].Complete || !strings.Contains(res.Calls[0].Err, want) {
		t.Errorf("calls = %+v, want one incomplete call citing the read error", res.Calls)
	}
}

// synthID checks a synthesized ID; TestSyntheticID checks more.
func synthID(_ int, id string) bool { return strings.HasPrefix(id, "call_synth_") }
