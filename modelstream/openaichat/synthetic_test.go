package openaichat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

const (
	done     = "[DONE]"
	roleOnly = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}`
	usage    = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`
)

// js quotes s as a JSON string.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// calls is a chunk whose delta holds the given raw tool_calls fragments.
func calls(frags ...string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[` +
		strings.Join(frags, ",") + `]},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"x"}`
}

// start is the first fragment of a call, as OpenAI sends it.
func start(index int, id, name string) string {
	return calls(fmt.Sprintf(`{"index":%d,"id":%s,"type":"function","function":{"name":%s,"arguments":""}}`, index, js(id), js(name)))
}

// args is a later fragment of the call at index.
func args(index int, a string) string {
	return calls(fmt.Sprintf(`{"index":%d,"function":{"arguments":%s}}`, index, js(a)))
}

func finish(reason string) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":%s}]}`, js(reason))
}

func content(text string) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%s},"finish_reason":null}]}`, js(text))
}

// synthCall is an expected call; at is the position in the case's event
// list of the event that completes or ends it, -1 for the end of the input.
type synthCall = streamtest.WantCall

type synthCase = streamtest.Case

var synthCases = []synthCase{
	{
		Name:   "one call, finish_reason, usage, [DONE]",
		Events: []string{roleOnly, start(0, "call_a", "f"), args(0, `{"x":`), args(0, ` 1}`), finish("tool_calls"), usage, done},
		Calls:  []synthCall{{ID: "call_a", Name: "f", Raw: `{"x": 1}`, Input: `{"x":1}`, Complete: true, At: 3}},
		Stop:   "tool_calls",
	},
	{
		Name: "index starting at 1 and sparse",
		Events: []string{roleOnly, content("Reading."), start(1, "call_a", "f"), args(1, `{"a":1}`), start(5, "call_b", "g"),
			args(5, `{}`), finish("tool_calls"), done},
		Calls: []synthCall{
			{ID: "call_a", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 3},
			{ID: "call_b", Name: "g", Raw: `{}`, Input: `{}`, Complete: true, At: 5},
		},
		Stop: "tool_calls",
	},
	{
		Name: "index missing, calls told apart by id (Gemini)",
		Events: []string{
			calls(`{"id":"function-call-1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}`),
			calls(`{"id":"function-call-2","type":"function","function":{"name":"f","arguments":"{\"a\":"}}`),
			calls(`{"id":"function-call-2","function":{"arguments":"2}"}}`),
			finish("stop"), done},
		Calls: []synthCall{
			{ID: "function-call-1", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 0},
			{ID: "function-call-2", Name: "f", Raw: `{"a":2}`, Input: `{"a":2}`, Complete: true, At: 2},
		},
		Stop: "stop",
	},
	{
		Name: "index and id missing: fragments continue the latest call",
		Events: []string{
			calls(`{"type":"function","function":{"name":"f","arguments":"{\"a\""}}`),
			calls(`{"function":{"arguments":":1}"}}`),
			finish("tool_calls"), done},
		Calls: []synthCall{{Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 1}},
		Stop:  "tool_calls",
	},
	{
		Name: "index and id missing: another tool name is another call",
		Events: []string{
			calls(`{"function":{"name":"f","arguments":"{}"}}`),
			calls(`{"function":{"name":"g","arguments":"{\"b\":true}"}}`),
			finish("tool_calls"), done},
		Calls: []synthCall{
			{Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 0},
			{Name: "g", Raw: `{"b":true}`, Input: `{"b":true}`, Complete: true, At: 1},
		},
		Stop: "tool_calls",
	},
	{
		Name: "index arriving after the first fragment",
		Events: []string{calls(`{"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"a\""}}`),
			calls(`{"index":0,"function":{"arguments":":1}"}}`), calls(`{"index":1,"id":"call_b","function":{"name":"g","arguments":"{}"}}`),
			finish("tool_calls"), done},
		Calls: []synthCall{
			{ID: "call_a", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 1},
			{ID: "call_b", Name: "g", Raw: `{}`, Input: `{}`, Complete: true, At: 2},
		},
		Stop: "tool_calls",
	},
	{
		Name: "index 0 reused with another id (Ollama-compatible)",
		Events: []string{start(0, "call_a", "f"), args(0, `{"q":"x"}`), start(0, "call_b", "f"), args(0, `{"q":"y"}`),
			finish("tool_calls"), done},
		Calls: []synthCall{
			{ID: "call_a", Name: "f", Raw: `{"q":"x"}`, Input: `{"q":"x"}`, Complete: true, At: 1},
			{ID: "call_b", Name: "f", Raw: `{"q":"y"}`, Input: `{"q":"y"}`, Complete: true, At: 3},
		},
		Stop: "tool_calls",
	},
	{
		Name: "id resent on every fragment is the same call",
		Events: []string{calls(`{"index":0,"id":"call_a","function":{"name":"f","arguments":"{\"a\""}}`),
			calls(`{"index":0,"id":"call_a","function":{"arguments":":1}"}}`), finish("tool_calls"), done},
		Calls: []synthCall{{ID: "call_a", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 1}},
		Stop:  "tool_calls",
	},
	{
		Name: "full name resent on every fragment (MiniMax, NIM): assigned, not appended",
		Events: []string{
			calls(`{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}`),
			calls(`{"index":0,"function":{"name":"get_weather","arguments":"{\"city\":"}}`),
			calls(`{"index":0,"function":{"name":"get_weather","arguments":"\"Oslo\"}"}}`),
			finish("tool_calls"), done},
		Calls: []synthCall{{ID: "call_a", Name: "get_weather", Raw: `{"city":"Oslo"}`, Input: `{"city":"Oslo"}`, Complete: true, At: 2}},
		Stop:  "tool_calls",
	},
	{
		Name: "id and name arriving on a later fragment",
		Events: []string{calls(`{"index":0,"function":{"arguments":"{\"a\":"}}`),
			calls(`{"index":0,"id":"call_late","function":{"name":"f","arguments":"1}"}}`), finish("tool_calls"), done},
		Calls: []synthCall{{ID: "call_late", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 1}},
		Stop:  "tool_calls",
	},
	{
		Name: "integer id (Poolside)",
		Events: []string{calls(`{"index":0,"id":7,"type":"function","function":{"name":"f","arguments":"{}"}}`),
			calls(`{"index":0,"id":7,"function":{"arguments":""}}`), finish("tool_calls"), done},
		Calls: []synthCall{{ID: "7", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 0}},
		Stop:  "tool_calls",
	},
	{
		Name: "resent name or empty arguments for a closed call are harmless",
		Events: []string{start(0, "call_a", "f"), args(0, `{}`), start(1, "call_b", "g"),
			calls(`{"index":0,"id":"call_a","function":{"name":"f","arguments":""}}`), args(1, `{}`), finish("tool_calls"), done},
		Calls: []synthCall{
			{ID: "call_a", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 1},
			{ID: "call_b", Name: "g", Raw: `{}`, Input: `{}`, Complete: true, At: 4},
		},
		Stop: "tool_calls",
	},
	{
		Name:   "a fragment after finish_reason for the closed call fails the stream",
		Events: []string{start(0, "call_a", "f"), args(0, `{}`), finish("tool_calls"), args(0, `{"late":1}`), done},
		Calls:  []synthCall{{ID: "call_a", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 1}},
		Stop:   "tool_calls",
		EndErr: `continues call 0 (id "call_a", tool f, index 0) after its arguments closed`,
	},
	{
		Name: "interleaved calls (llama.cpp, vLLM): each is complete when its arguments close",
		Events: []string{start(0, "call_a", "f"), start(1, "call_b", "g"), args(0, `{"a":`), args(1, `{"b":`),
			args(0, `1}`), args(1, `[2, "}"]}`), finish("tool_calls"), done},
		Calls: []synthCall{
			{ID: "call_a", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 4},
			{ID: "call_b", Name: "g", Raw: `{"b":[2, "}"]}`, Input: `{"b":[2,"}"]}`, Complete: true, At: 5},
		},
		Stop: "tool_calls",
	},
	{
		Name: "a call is complete when its arguments close, not when the next call starts",
		Events: []string{start(0, "call_a", "f"), args(0, `{"x":`), args(0, ` {"y": "\"}"}}`), args(0, " \n "),
			start(1, "call_b", "g"), args(1, `{}`), finish("tool_calls"), done},
		Calls: []synthCall{
			{ID: "call_a", Name: "f", Raw: `{"x": {"y": "\"}"}}`, Input: `{"x":{"y":"\"}"}}`, Complete: true, At: 2},
			{ID: "call_b", Name: "g", Raw: `{}`, Input: `{}`, Complete: true, At: 5},
		},
		Stop: "tool_calls",
	},
	{
		Name: "a call that closes before an earlier one waits for it, keeping its own At",
		Events: []string{start(0, "call_a", "f"), start(1, "call_b", "g"), args(1, `{"b":2}`), args(0, `{"a":`), args(0, `1}`),
			finish("tool_calls"), done},
		Calls: []synthCall{
			{ID: "call_a", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 4},
			{ID: "call_b", Name: "g", Raw: `{"b":2}`, Input: `{"b":2}`, Complete: true, At: 2},
		},
		Stop: "tool_calls",
	},
	{
		Name: "a fragment for a call whose arguments closed fails the stream, naming the call",
		Events: []string{start(0, "call_a", "f"), args(0, `{"a":1}`), start(1, "call_b", "g"), args(0, `, "b":2}`),
			finish("tool_calls"), done},
		Calls: []synthCall{
			{ID: "call_a", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 1},
			{ID: "call_b", Name: "g", At: 3, ErrHas: "tool call incomplete"},
		},
		EndErr: `tool call fragment at bytes {2}-{3} continues call 0 (id "call_a", tool f, index 0) after its arguments closed`,
	},
	{
		Name:   "calls whose arguments never started are complete at finish_reason",
		Events: []string{start(0, "call_a", "f"), start(1, "call_b", "g"), args(1, "  "), finish("tool_calls"), done},
		Calls: []synthCall{
			{ID: "call_a", Name: "f", Input: `{}`, Complete: true, At: 3},
			{ID: "call_b", Name: "g", Raw: "  ", Input: `{}`, Complete: true, At: 3},
		},
		Stop: "tool_calls",
	},
	{
		Name: "index 0 reused without ids: a fragment naming a tool after the arguments closed is a new call",
		Events: []string{calls(`{"index":0,"type":"function","function":{"name":"f","arguments":"{\"q\":1}"}}`),
			calls(`{"index":0,"type":"function","function":{"name":"f","arguments":"{\"q\":2}"}}`), finish("tool_calls"), done},
		Calls: []synthCall{
			{Name: "f", Raw: `{"q":1}`, Input: `{"q":1}`, Complete: true, At: 0},
			{Name: "f", Raw: `{"q":2}`, Input: `{"q":2}`, Complete: true, At: 1},
		},
		Stop: "tool_calls",
	},
	{
		Name:   "arguments that are a JSON string close at its quote",
		Events: []string{start(0, "call_a", "f"), args(0, `"x`), args(0, `}"`), finish("tool_calls"), done},
		Calls:  []synthCall{{Ended: true, ID: "call_a", Name: "f", Raw: `"x}"`, At: 2, ErrHas: "tool arguments are a JSON string, not an object"}},
		Stop:   "tool_calls",
	},
	{
		Name: "whole calls in one chunk, index last, with finish_reason (Groq, xAI)",
		Events: []string{`{"id":"chatcmpl-g","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[` +
			`{"id":"fc_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"},"index":0},` +
			`{"id":"fc_2","type":"function","function":{"name":"g","arguments":"{\"b\":2}"},"index":1}` +
			`]},"finish_reason":"tool_calls"}],"x_groq":{"id":"req_1"}}`, done},
		Calls: []synthCall{
			{ID: "fc_1", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 0},
			{ID: "fc_2", Name: "g", Raw: `{"b":2}`, Input: `{"b":2}`, Complete: true, At: 0},
		},
		Stop: "tool_calls",
	},
	{
		Name:   "finish_reason stop with tool calls: the calls are trusted",
		Events: []string{start(0, "call_a", "f"), args(0, `{"k":"v"}`), finish("stop"), done},
		Calls:  []synthCall{{ID: "call_a", Name: "f", Raw: `{"k":"v"}`, Input: `{"k":"v"}`, Complete: true, At: 1}},
		Stop:   "stop",
	},
	{
		Name:   "[DONE] completes a call whose arguments never started, without finish_reason",
		Events: []string{start(0, "call_a", "f"), args(0, `{"k":"v"}`), start(1, "call_b", "g"), done},
		Calls: []synthCall{
			{ID: "call_a", Name: "f", Raw: `{"k":"v"}`, Input: `{"k":"v"}`, Complete: true, At: 1},
			{ID: "call_b", Name: "g", Input: `{}`, Complete: true, At: 3},
		},
	},
	{
		Name:   "[DONE] padded, without a space, unterminated",
		Events: []string{start(0, "call_a", "f"), args(0, `{}`), "data:[DONE]   "},
		Calls:  []synthCall{{ID: "call_a", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 1}},
	},
	{
		Name: "finish_reason length cuts off the calls still open, not those whose arguments closed",
		Events: []string{start(0, "call_a", "f"), args(0, `{"a":1}`), start(1, "call_b", "g"), args(1, `{"b":2`), start(2, "call_c", "h"),
			finish("length"), done},
		Calls: []synthCall{
			{ID: "call_a", Name: "f", Raw: `{"a":1}`, Input: `{"a":1}`, Complete: true, At: 1},
			{ID: "call_b", Name: "g", Raw: `{"b":2`, At: 5,
				ErrHas: "tool call incomplete: the stream ended before the call was complete (finish_reason length)"},
			{ID: "call_c", Name: "h", At: 5, ErrHas: "(finish_reason length)"},
		},
		Stop: "length",
	},
	{
		Name:   "event: error mid-call (Groq), no [DONE]",
		Events: []string{start(0, "call_a", "f"), args(0, `{"a":`), "event: error\ndata: {\"error\":{\"message\":\"Tool call validation failed\",\"type\":\"invalid_request_error\",\"code\":\"tool_use_failed\",\"failed_generation\":\"x\",\"status_code\":400}}\n\n"},
		Calls:  []synthCall{{ID: "call_a", Name: "f", Raw: `{"a":`, At: 2, ErrHas: "tool call incomplete: the stream ended before the call was complete (error event at bytes {1}-{2}"}},
		EndErr: "error event at bytes {1}-{2}: invalid_request_error tool_use_failed: Tool call validation failed",
	},
	{
		Name:   "data: {\"error\":...} (OpenAI, SGLang)",
		Events: []string{start(0, "call_a", "f"), `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`, done},
		Calls:  []synthCall{{ID: "call_a", Name: "f", At: 1, ErrHas: "tool call incomplete"}},
		EndErr: "error event at bytes {0}-{1}: server_error: The server had an error while processing your request.",
	},
	{
		Name:   `vLLM {"object":"error"}`,
		Events: []string{roleOnly, `{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}`, done},
		EndErr: "error event at bytes {0}-{1}: BadRequestError 400: This model's maximum context length is 4096 tokens.",
	},
	{
		Name: "error field in a normal chunk is checked before its choices (OpenRouter)",
		Events: []string{start(0, "call_a", "f"),
			`{"id":"gen-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":"error"}],"error":{"code":502,"message":"Provider returned error"}}`,
			done},
		Calls:  []synthCall{{ID: "call_a", Name: "f", At: 1, ErrHas: "(error event at bytes {0}-{1}"}},
		EndErr: "error event at bytes {0}-{1}: 502: Provider returned error",
	},
	{
		Name:   "error as a bare string",
		Events: []string{roleOnly, `{"error":"rate limited"}`},
		EndErr: "error event at bytes {0}-{1}: rate limited",
	},
	{
		Name:   "null and empty error fields are not errors",
		Events: []string{calls(`{"index":0,"id":"call_a","function":{"name":"f","arguments":"{}"}}`), `{"choices":[],"error":null}`, `{"choices":[],"error":""}`, finish("tool_calls"), done},
		Calls:  []synthCall{{ID: "call_a", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 0}},
		Stop:   "tool_calls",
	},
	{
		Name:   "error event with text data",
		Events: []string{roleOnly, "event: error\ndata: upstream connect error\n\n"},
		EndErr: `error event at bytes {0}-{1}: "upstream connect error"`,
	},
	{
		Name:   "error event without data",
		Events: []string{roleOnly, "event: error\n\n"},
		EndErr: "error event at bytes {0}-{1}: no data",
	},
	{
		Name:   "EOF mid-call without finish_reason: truncated",
		Events: []string{roleOnly, start(0, "call_a", "f"), args(0, `{"path":"/tm`)},
		Calls: []synthCall{{ID: "call_a", Name: "f", Raw: `{"path":"/tm`, At: -1,
			ErrHas: "tool call incomplete: the stream ended before the call was complete (stream truncated at byte {len}: it ended without [DONE] or a finish_reason)"}},
		EndErr: "stream truncated at byte {len}: it ended without [DONE] or a finish_reason",
	},
	{
		Name:   "EOF after a call whose arguments closed: the call stands, the stream is truncated",
		Events: []string{start(0, "call_a", "f"), args(0, `{}`)},
		Calls:  []synthCall{{ID: "call_a", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 1}},
		EndErr: "stream truncated at byte {len}",
	},
	{
		Name:   "EOF after finish_reason without [DONE] is a normal end",
		Events: []string{start(0, "call_a", "f"), args(0, `{}`), finish("tool_calls"), usage},
		Calls:  []synthCall{{ID: "call_a", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 1}},
		Stop:   "tool_calls",
	},
	{
		Name:   "EOF in a call started after finish_reason",
		Events: []string{finish("stop"), start(0, "call_a", "f")},
		Calls:  []synthCall{{ID: "call_a", Name: "f", At: -1, ErrHas: "(finish_reason stop; stream truncated at byte {len}: it ended without [DONE] inside a tool call)"}},
		Stop:   "stop",
		EndErr: "stream truncated at byte {len}: it ended without [DONE] inside a tool call",
	},
	{
		Name:   "EOF mid-event",
		Events: []string{start(0, "call_a", "f"), `data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"argum`},
		Calls:  []synthCall{{ID: "call_a", Name: "f", At: -1, ErrHas: "bad event data"}},
		EndErr: "bad event data at bytes {0}-{len}: unexpected end of JSON input",
	},
	{
		Name:   "empty input",
		EndErr: "stream truncated at byte 0",
	},
	{
		Name: "a call with no name is not runnable",
		Events: []string{calls(`{"index":0,"id":"call_a","type":"function","function":{"arguments":"{\"a\":1}"}}`),
			start(1, "call_b", "g"), finish("tool_calls"), done},
		Calls: []synthCall{
			{ID: "call_a", Raw: `{"a":1}`, At: 0, ErrHas: "tool call has no name"},
			{ID: "call_b", Name: "g", Raw: ``, Input: `{}`, Complete: true, At: 2},
		},
		Stop: "tool_calls",
	},
	{
		Name:   `arguments "" and missing are {}`,
		Events: []string{start(0, "call_a", "f"), calls(`{"index":1,"id":"call_b","function":{"name":"g"}}`), finish("tool_calls"), done},
		Calls: []synthCall{
			{ID: "call_a", Name: "f", Raw: ``, Input: `{}`, Complete: true, At: 2},
			{ID: "call_b", Name: "g", Raw: ``, Input: `{}`, Complete: true, At: 2},
		},
		Stop: "tool_calls",
	},
	{
		Name:   "arguments as an object",
		Events: []string{calls("{\"index\":0,\"id\":\"call_a\",\"function\":{\"name\":\"f\",\"arguments\":{\"q\": \"a\\\"b\",\t\"n\": [1]}}}"), finish("tool_calls"), done},
		Calls:  []synthCall{{ID: "call_a", Name: "f", Raw: "{\"q\": \"a\\\"b\",\t\"n\": [1]}", Input: `{"q":"a\"b","n":[1]}`, Complete: true, At: 0}},
		Stop:   "tool_calls",
	},
	{
		Name:   "bad JSON arguments",
		Events: []string{start(0, "call_a", "f"), args(0, `{"a": 1,`), args(0, ` oops}`), finish("tool_calls"), done},
		Calls: []synthCall{{Ended: true, ID: "call_a", Name: "f", Raw: `{"a": 1, oops}`, At: 2,
			ErrHas: "tool arguments are not valid JSON: invalid character 'o' looking for beginning of object key string (after 10 bytes of the arguments)"}},
		Stop: "tool_calls",
	},
	{
		Name:   "arguments that are not an object",
		Events: []string{start(0, "call_a", "f"), args(0, `[1, 2]`), finish("tool_calls"), done},
		Calls:  []synthCall{{Ended: true, ID: "call_a", Name: "f", Raw: `[1, 2]`, At: 1, ErrHas: "tool arguments are a JSON array, not an object"}},
		Stop:   "tool_calls",
	},
	{
		Name: "escaped surrogate pair split between fragments",
		Events: []string{start(0, "call_a", "f"),
			calls(`{"index":0,"function":{"arguments":"{\"e\":\"\ud83d"}}`),
			calls(`{"index":0,"function":{"arguments":"\ude00 \u00e9\"}"}}`), finish("tool_calls"), done},
		Calls: []synthCall{{ID: "call_a", Name: "f", Raw: `{"e":"😀 é"}`, Input: `{"e":"😀 é"}`, Complete: true, At: 2}},
		Stop:  "tool_calls",
	},
	{
		Name: "UTF-8 sequence split between fragments",
		Events: []string{start(0, "call_a", "f"),
			calls("{\"index\":0,\"function\":{\"arguments\":\"{\\\"e\\\":\\\"\xe2\x82\"}}"),
			calls("{\"index\":0,\"function\":{\"arguments\":\"\xac\\\"}\"}}"), finish("tool_calls"), done},
		Calls: []synthCall{{ID: "call_a", Name: "f", Raw: `{"e":"€"}`, Input: `{"e":"€"}`, Complete: true, At: 2}},
		Stop:  "tool_calls",
	},
	{
		Name: "other choices are ignored",
		Events: []string{start(0, "call_a", "f"),
			`{"id":"chatcmpl-1","choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"id":"call_z","function":{"name":"z","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			args(0, `{}`), finish("tool_calls"), done},
		Calls: []synthCall{{ID: "call_a", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 2}},
		Stop:  "tool_calls",
	},
	{
		Name: "the first choice named is read, whatever its index",
		Events: []string{`{"id":"c","choices":[{"index":2,"delta":{"role":"assistant"}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_z","function":{"name":"z","arguments":"{}"}}]}},{"index":2,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"f","arguments":"{}"}}]}}]}`,
			`{"id":"c","choices":[{"index":2,"delta":{},"finish_reason":"tool_calls"}]}`, done},
		Calls: []synthCall{{ID: "call_a", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 1}},
		Stop:  "tool_calls",
	},
	{
		Name: "legacy function_call delta",
		Events: []string{`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","function_call":{"name":"f","arguments":""}},"finish_reason":null}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"function_call":{"arguments":"{\"x\":1}"}},"finish_reason":null}]}`,
			finish("function_call"), done},
		Calls: []synthCall{{Name: "f", Raw: `{"x":1}`, Input: `{"x":1}`, Complete: true, At: 1}},
		Stop:  "function_call",
	},
	{
		Name: "extra fields, comments, blank data and CRLF framing are ignored",
		Events: []string{": OPENROUTER PROCESSING\n\n",
			`{"id":"c","choices":[{"index":0,"delta":{"reasoning":"hmm","channel":"analysis","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""},"extra_content":{"google":{"thought_signature":"sig"}}}]},"finish_reason":null}],"usage":null,"obfuscation":"abc"}`,
			"data:\n\n",
			"data:" + args(0, `{"k":[1,{"z":null}]}`) + "   \r\n\r\n",
			"event: message\r\ndata: " + finish("tool_calls") + "\r\n\r\n",
			done},
		Calls: []synthCall{{ID: "call_a", Name: "f", Raw: `{"k":[1,{"z":null}]}`, Input: `{"k":[1,{"z":null}]}`, Complete: true, At: 3}},
		Stop:  "tool_calls",
	},
	{
		Name:   "fragments that carry nothing start nothing",
		Events: []string{calls(`{"index":3}`, `{"index":4,"type":"function","function":{"arguments":""}}`, `null`), finish("stop"), done},
		Stop:   "stop",
	},
	{
		Name:   "bad JSON in a chunk stops parsing",
		Events: []string{start(0, "call_a", "f"), `{"choices":[,]}`, finish("tool_calls"), done},
		Calls:  []synthCall{{ID: "call_a", Name: "f", At: 1, ErrHas: "bad event data"}},
		EndErr: "bad event data at bytes {0}-{1}: invalid character ',' looking for beginning of value (after 13 bytes of the data)",
	},
	{
		Name:   "a tool call field of the wrong type stops parsing",
		Events: []string{start(0, "call_a", "f"), `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":7}}]}}]}`, done},
		Calls:  []synthCall{{ID: "call_a", Name: "f", At: 1, ErrHas: "bad chunk"}},
		EndErr: "bad chunk at bytes {0}-{1}: json: cannot use number value for field function.arguments",
	},
	{
		Name:   "fields of the wrong type outside the choices are harmless",
		Events: []string{`{"id":5,"object":["x"],"usage":"none","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"f","arguments":"{}"}}]}}]}`, done},
		Calls:  []synthCall{{ID: "call_a", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 0}},
	},
	{
		Name:   "an event after [DONE] fails the stream instead of being dropped",
		Events: []string{start(0, "call_a", "f"), done, start(1, "call_b", "g"), "garbage"},
		Calls:  []synthCall{{ID: "call_a", Name: "f", Input: `{}`, Complete: true, At: 1}},
		EndErr: "stream continues after [DONE]: another event at bytes {1}-{2}",
	},
	{
		Name:   "comments, blank data and a repeated [DONE] after [DONE] are harmless",
		Events: []string{start(0, "call_a", "f"), args(0, `{}`), finish("tool_calls"), done, ": keepalive\n\n", "data:\n\n", done},
		Calls:  []synthCall{{ID: "call_a", Name: "f", Raw: `{}`, Input: `{}`, Complete: true, At: 1}},
		Stop:   "tool_calls",
	},
}

func TestSynthetic(t *testing.T) {
	streamtest.RunCases(t, parse, frame, synthCases, streamtest.CaseOpts{SynthID: synthID})
}

func TestSyntheticID(t *testing.T) {
	noID := func(msg, input string) []byte {
		data, _ := frame([]string{
			`{"id":` + js(msg) + `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":` + js(input) + `}}]}}]}`,
			finish("tool_calls"), done})
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
	a := id(noID("chatcmpl-1", `{"x":1}`))
	if !strings.HasPrefix(a, "call_synth_") || len(a) != len("call_synth_")+24 {
		t.Errorf("synthesized id %q, want call_synth_ and 24 hex digits", a)
	}
	if b := id(noID("chatcmpl-1", `{"x":1}`)); b != a {
		t.Errorf("same stream gave ids %q and %q", a, b)
	}
	if b := id(noID("chatcmpl-2", `{"x":1}`)); b == a {
		t.Errorf("another message gave the same id %q", a)
	}
	if b := id(noID("chatcmpl-1", `{"x":2}`)); b == a {
		t.Errorf("another input gave the same id %q", a)
	}
}

// TestLongEvent checks a call whose single chunk is far over bufio.Scanner's
// 64 KiB default, fed one byte at a time too.
func TestLongEvent(t *testing.T) {
	long := strings.Repeat("héllo wörld ", 40000)
	in := `{"text":` + js(long) + `}`
	data, _ := frame([]string{start(0, "call_a", "write"), args(0, in), finish("tool_calls"), done})
	for _, r := range []io.Reader{bytes.NewReader(data), iotest.OneByteReader(bytes.NewReader(data))} {
		res := parse(t, r)
		if len(res.Calls) != 1 || !res.Calls[0].Complete || res.Calls[0].RawInput != in {
			t.Fatalf("got %d calls, first complete=%v err=%q", len(res.Calls), len(res.Calls) > 0 && res.Calls[0].Complete, res.Calls[0].Err)
		}
	}
}

func TestHandlerErrorStops(t *testing.T) {
	data, _ := frame([]string{start(0, "call_a", "f"), start(1, "call_b", "g"), finish("tool_calls"), done})
	streamtest.CheckHandlerErrorStops(t, New(), data)
}

func TestContextCancelled(t *testing.T) {
	data, _ := frame([]string{start(0, "call_a", "f"), start(1, "call_b", "g"), start(2, "call_c", "h"), finish("tool_calls"), done})
	streamtest.CheckContextCancelled(t, New(), data)
}

func TestReadError(t *testing.T) {
	data, _ := frame([]string{start(0, "call_a", "f"), args(0, `{"a":`)})
	res, want := streamtest.CheckReadError(t, New(), data, contract)
	if len(res.Calls) != 1 || res.Calls[0].Complete || !strings.Contains(res.Calls[0].Err, want) {
		t.Errorf("calls = %+v, want one incomplete call citing the read error", res.Calls)
	}
}

// synthID checks a synthesized ID; TestSyntheticID checks more.
func synthID(_ int, id string) bool { return strings.HasPrefix(id, "call_synth_") }
