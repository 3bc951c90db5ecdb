package openaichat

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
		name:   "one call, finish_reason, usage, [DONE]",
		events: []string{roleOnly, start(0, "call_a", "f"), args(0, `{"x":`), args(0, ` 1}`), finish("tool_calls"), usage, done},
		calls:  []synthCall{{id: "call_a", name: "f", raw: `{"x": 1}`, input: `{"x":1}`, complete: true, at: 4}},
		stop:   "tool_calls",
	},
	{
		name: "index starting at 1 and sparse",
		events: []string{roleOnly, content("Reading."), start(1, "call_a", "f"), args(1, `{"a":1}`), start(5, "call_b", "g"),
			args(5, `{}`), finish("tool_calls"), done},
		calls: []synthCall{
			{id: "call_a", name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 4},
			{id: "call_b", name: "g", raw: `{}`, input: `{}`, complete: true, at: 6},
		},
		stop: "tool_calls",
	},
	{
		name: "index missing, calls told apart by id (Gemini)",
		events: []string{
			calls(`{"id":"function-call-1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}`),
			calls(`{"id":"function-call-2","type":"function","function":{"name":"f","arguments":"{\"a\":"}}`),
			calls(`{"id":"function-call-2","function":{"arguments":"2}"}}`),
			finish("stop"), done},
		calls: []synthCall{
			{id: "function-call-1", name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 1},
			{id: "function-call-2", name: "f", raw: `{"a":2}`, input: `{"a":2}`, complete: true, at: 3},
		},
		stop: "stop",
	},
	{
		name: "index and id missing: fragments continue the open call",
		events: []string{
			calls(`{"type":"function","function":{"name":"f","arguments":"{\"a\""}}`),
			calls(`{"function":{"arguments":":1}"}}`),
			finish("tool_calls"), done},
		calls: []synthCall{{name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 2}},
		stop:  "tool_calls",
	},
	{
		name: "index and id missing: another tool name is another call",
		events: []string{
			calls(`{"function":{"name":"f","arguments":"{}"}}`),
			calls(`{"function":{"name":"g","arguments":"{\"b\":true}"}}`),
			finish("tool_calls"), done},
		calls: []synthCall{
			{name: "f", raw: `{}`, input: `{}`, complete: true, at: 1},
			{name: "g", raw: `{"b":true}`, input: `{"b":true}`, complete: true, at: 2},
		},
		stop: "tool_calls",
	},
	{
		name: "index arriving after the first fragment",
		events: []string{calls(`{"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"a\""}}`),
			calls(`{"index":0,"function":{"arguments":":1}"}}`), calls(`{"index":1,"id":"call_b","function":{"name":"g","arguments":"{}"}}`),
			finish("tool_calls"), done},
		calls: []synthCall{
			{id: "call_a", name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 2},
			{id: "call_b", name: "g", raw: `{}`, input: `{}`, complete: true, at: 3},
		},
		stop: "tool_calls",
	},
	{
		name: "index 0 reused with another id (Ollama-compatible)",
		events: []string{start(0, "call_a", "f"), args(0, `{"q":"x"}`), start(0, "call_b", "f"), args(0, `{"q":"y"}`),
			finish("tool_calls"), done},
		calls: []synthCall{
			{id: "call_a", name: "f", raw: `{"q":"x"}`, input: `{"q":"x"}`, complete: true, at: 2},
			{id: "call_b", name: "f", raw: `{"q":"y"}`, input: `{"q":"y"}`, complete: true, at: 4},
		},
		stop: "tool_calls",
	},
	{
		name: "id resent on every fragment is the same call",
		events: []string{calls(`{"index":0,"id":"call_a","function":{"name":"f","arguments":"{\"a\""}}`),
			calls(`{"index":0,"id":"call_a","function":{"arguments":":1}"}}`), finish("tool_calls"), done},
		calls: []synthCall{{id: "call_a", name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 2}},
		stop:  "tool_calls",
	},
	{
		name: "full name resent on every fragment (MiniMax, NIM): assigned, not appended",
		events: []string{
			calls(`{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}`),
			calls(`{"index":0,"function":{"name":"get_weather","arguments":"{\"city\":"}}`),
			calls(`{"index":0,"function":{"name":"get_weather","arguments":"\"Oslo\"}"}}`),
			finish("tool_calls"), done},
		calls: []synthCall{{id: "call_a", name: "get_weather", raw: `{"city":"Oslo"}`, input: `{"city":"Oslo"}`, complete: true, at: 3}},
		stop:  "tool_calls",
	},
	{
		name: "id and name arriving on a later fragment",
		events: []string{calls(`{"index":0,"function":{"arguments":"{\"a\":"}}`),
			calls(`{"index":0,"id":"call_late","function":{"name":"f","arguments":"1}"}}`), finish("tool_calls"), done},
		calls: []synthCall{{id: "call_late", name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 2}},
		stop:  "tool_calls",
	},
	{
		name: "integer id (Poolside)",
		events: []string{calls(`{"index":0,"id":7,"type":"function","function":{"name":"f","arguments":"{}"}}`),
			calls(`{"index":0,"id":7,"function":{"arguments":""}}`), finish("tool_calls"), done},
		calls: []synthCall{{id: "7", name: "f", raw: `{}`, input: `{}`, complete: true, at: 2}},
		stop:  "tool_calls",
	},
	{
		name: "interleaved calls: a fragment for a reported call fails the stream",
		events: []string{start(0, "call_a", "f"), args(0, `{"a":`), start(1, "call_b", "g"), args(1, `{"b":`),
			args(0, `1}`), args(1, `2}`), finish("tool_calls"), done},
		calls: []synthCall{
			{id: "call_a", name: "f", raw: `{"a":`, at: 2, errHas: "tool arguments are not valid JSON: unexpected end of JSON input"},
			{id: "call_b", name: "g", raw: `{"b":`, at: 4,
				errHas: "tool call incomplete: the stream ended before the call was complete (tool call fragment at bytes {3}-{4} is for call 0"},
		},
		endErr: "tool call fragment at bytes {3}-{4} is for call 0, which was already reported: the stream interleaves tool calls",
	},
	{
		name:   "interleaving detected after a call that happened to be whole",
		events: []string{start(0, "call_a", "f"), args(0, `{"a":1}`), start(1, "call_b", "g"), args(0, `{}`), finish("tool_calls"), done},
		calls: []synthCall{
			{id: "call_a", name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 2},
			{id: "call_b", name: "g", raw: ``, at: 3, errHas: "tool call incomplete"},
		},
		endErr: "is for call 0, which was already reported",
	},
	{
		name: "resent name or empty arguments for a reported call are harmless",
		events: []string{start(0, "call_a", "f"), args(0, `{}`), start(1, "call_b", "g"),
			calls(`{"index":0,"id":"call_a","function":{"name":"f","arguments":""}}`), args(1, `{}`), finish("tool_calls"), done},
		calls: []synthCall{
			{id: "call_a", name: "f", raw: `{}`, input: `{}`, complete: true, at: 2},
			{id: "call_b", name: "g", raw: `{}`, input: `{}`, complete: true, at: 5},
		},
		stop: "tool_calls",
	},
	{
		name:   "a fragment after finish_reason for the closed call fails the stream",
		events: []string{start(0, "call_a", "f"), args(0, `{}`), finish("tool_calls"), args(0, `{"late":1}`), done},
		calls:  []synthCall{{id: "call_a", name: "f", raw: `{}`, input: `{}`, complete: true, at: 2}},
		stop:   "tool_calls",
		endErr: "already reported: the stream interleaves tool calls",
	},
	{
		name: "whole calls in one chunk, index last, with finish_reason (Groq, xAI)",
		events: []string{`{"id":"chatcmpl-g","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[` +
			`{"id":"fc_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"},"index":0},` +
			`{"id":"fc_2","type":"function","function":{"name":"g","arguments":"{\"b\":2}"},"index":1}` +
			`]},"finish_reason":"tool_calls"}],"x_groq":{"id":"req_1"}}`, done},
		calls: []synthCall{
			{id: "fc_1", name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 0},
			{id: "fc_2", name: "g", raw: `{"b":2}`, input: `{"b":2}`, complete: true, at: 0},
		},
		stop: "tool_calls",
	},
	{
		name:   "finish_reason stop with tool calls: the calls are trusted",
		events: []string{start(0, "call_a", "f"), args(0, `{"k":"v"}`), finish("stop"), done},
		calls:  []synthCall{{id: "call_a", name: "f", raw: `{"k":"v"}`, input: `{"k":"v"}`, complete: true, at: 2}},
		stop:   "stop",
	},
	{
		name:   "[DONE] closes an open call without finish_reason",
		events: []string{start(0, "call_a", "f"), args(0, `{"k":"v"}`), done},
		calls:  []synthCall{{id: "call_a", name: "f", raw: `{"k":"v"}`, input: `{"k":"v"}`, complete: true, at: 2}},
	},
	{
		name:   "[DONE] padded, without a space, unterminated",
		events: []string{start(0, "call_a", "f"), args(0, `{}`), "data:[DONE]   "},
		calls:  []synthCall{{id: "call_a", name: "f", raw: `{}`, input: `{}`, complete: true, at: 2}},
	},
	{
		name:   "finish_reason length cuts the open call off, even if it parses",
		events: []string{start(0, "call_a", "f"), args(0, `{"a":1}`), start(1, "call_b", "g"), args(1, `{"b":2}`), finish("length"), done},
		calls: []synthCall{
			{id: "call_a", name: "f", raw: `{"a":1}`, input: `{"a":1}`, complete: true, at: 2},
			{id: "call_b", name: "g", raw: `{"b":2}`, at: 4,
				errHas: "tool call incomplete: the stream ended before the call was complete (finish_reason length)"},
		},
		stop: "length",
	},
	{
		name:   "event: error mid-call (Groq), no [DONE]",
		events: []string{start(0, "call_a", "f"), args(0, `{"a":`), "event: error\ndata: {\"error\":{\"message\":\"Tool call validation failed\",\"type\":\"invalid_request_error\",\"code\":\"tool_use_failed\",\"failed_generation\":\"x\",\"status_code\":400}}\n\n"},
		calls:  []synthCall{{id: "call_a", name: "f", raw: `{"a":`, at: 2, errHas: "tool call incomplete: the stream ended before the call was complete (error event at bytes {1}-{2}"}},
		endErr: "error event at bytes {1}-{2}: invalid_request_error tool_use_failed: Tool call validation failed",
	},
	{
		name:   "data: {\"error\":...} (OpenAI, SGLang)",
		events: []string{start(0, "call_a", "f"), `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`, done},
		calls:  []synthCall{{id: "call_a", name: "f", at: 1, errHas: "tool call incomplete"}},
		endErr: "error event at bytes {0}-{1}: server_error: The server had an error while processing your request.",
	},
	{
		name:   `vLLM {"object":"error"}`,
		events: []string{roleOnly, `{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}`, done},
		endErr: "error event at bytes {0}-{1}: BadRequestError 400: This model's maximum context length is 4096 tokens.",
	},
	{
		name: "error field in a normal chunk is checked before its choices (OpenRouter)",
		events: []string{start(0, "call_a", "f"),
			`{"id":"gen-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":"error"}],"error":{"code":502,"message":"Provider returned error"}}`,
			done},
		calls:  []synthCall{{id: "call_a", name: "f", at: 1, errHas: "(error event at bytes {0}-{1}"}},
		endErr: "error event at bytes {0}-{1}: 502: Provider returned error",
	},
	{
		name:   "error as a bare string",
		events: []string{roleOnly, `{"error":"rate limited"}`},
		endErr: "error event at bytes {0}-{1}: rate limited",
	},
	{
		name:   "null and empty error fields are not errors",
		events: []string{calls(`{"index":0,"id":"call_a","function":{"name":"f","arguments":"{}"}}`), `{"choices":[],"error":null}`, `{"choices":[],"error":""}`, finish("tool_calls"), done},
		calls:  []synthCall{{id: "call_a", name: "f", raw: `{}`, input: `{}`, complete: true, at: 3}},
		stop:   "tool_calls",
	},
	{
		name:   "error event with text data",
		events: []string{roleOnly, "event: error\ndata: upstream connect error\n\n"},
		endErr: `error event at bytes {0}-{1}: "upstream connect error"`,
	},
	{
		name:   "error event without data",
		events: []string{roleOnly, "event: error\n\n"},
		endErr: "error event at bytes {0}-{1}: no data",
	},
	{
		name:   "EOF mid-call without finish_reason: truncated",
		events: []string{roleOnly, start(0, "call_a", "f"), args(0, `{"path":"/tm`)},
		calls: []synthCall{{id: "call_a", name: "f", raw: `{"path":"/tm`, at: -1,
			errHas: "tool call incomplete: the stream ended before the call was complete (stream truncated at byte {len}: it ended without [DONE] or a finish_reason)"}},
		endErr: "stream truncated at byte {len}: it ended without [DONE] or a finish_reason",
	},
	{
		name:   "EOF with a call whose text parses, still truncated",
		events: []string{start(0, "call_a", "f"), args(0, `{}`)},
		calls:  []synthCall{{id: "call_a", name: "f", raw: `{}`, at: -1, errHas: "stream truncated at byte {len}"}},
		endErr: "stream truncated at byte {len}",
	},
	{
		name:   "EOF after finish_reason without [DONE] is a normal end",
		events: []string{start(0, "call_a", "f"), args(0, `{}`), finish("tool_calls"), usage},
		calls:  []synthCall{{id: "call_a", name: "f", raw: `{}`, input: `{}`, complete: true, at: 2}},
		stop:   "tool_calls",
	},
	{
		name:   "EOF in a call started after finish_reason",
		events: []string{finish("stop"), start(0, "call_a", "f")},
		calls:  []synthCall{{id: "call_a", name: "f", at: -1, errHas: "(finish_reason stop; stream truncated at byte {len}: it ended without [DONE] inside a tool call)"}},
		stop:   "stop",
		endErr: "stream truncated at byte {len}: it ended without [DONE] inside a tool call",
	},
	{
		name:   "EOF mid-event",
		events: []string{start(0, "call_a", "f"), `data: {"id":"chatcmpl-1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"argum`},
		calls:  []synthCall{{id: "call_a", name: "f", at: -1, errHas: "bad event data"}},
		endErr: "bad event data at bytes {0}-{len}: unexpected end of JSON input",
	},
	{
		name:   "empty input",
		endErr: "stream truncated at byte 0",
	},
	{
		name: "a call with no name is not runnable",
		events: []string{calls(`{"index":0,"id":"call_a","type":"function","function":{"arguments":"{\"a\":1}"}}`),
			start(1, "call_b", "g"), finish("tool_calls"), done},
		calls: []synthCall{
			{id: "call_a", raw: `{"a":1}`, at: 1, errHas: "tool call has no name"},
			{id: "call_b", name: "g", raw: ``, input: `{}`, complete: true, at: 2},
		},
		stop: "tool_calls",
	},
	{
		name:   `arguments "" and missing are {}`,
		events: []string{start(0, "call_a", "f"), calls(`{"index":1,"id":"call_b","function":{"name":"g"}}`), finish("tool_calls"), done},
		calls: []synthCall{
			{id: "call_a", name: "f", raw: ``, input: `{}`, complete: true, at: 1},
			{id: "call_b", name: "g", raw: ``, input: `{}`, complete: true, at: 2},
		},
		stop: "tool_calls",
	},
	{
		name:   "arguments as an object",
		events: []string{calls("{\"index\":0,\"id\":\"call_a\",\"function\":{\"name\":\"f\",\"arguments\":{\"q\": \"a\\\"b\",\t\"n\": [1]}}}"), finish("tool_calls"), done},
		calls:  []synthCall{{id: "call_a", name: "f", raw: "{\"q\": \"a\\\"b\",\t\"n\": [1]}", input: `{"q":"a\"b","n":[1]}`, complete: true, at: 1}},
		stop:   "tool_calls",
	},
	{
		name:   "bad JSON arguments",
		events: []string{start(0, "call_a", "f"), args(0, `{"a": 1,`), args(0, ` oops}`), finish("tool_calls"), done},
		calls: []synthCall{{id: "call_a", name: "f", raw: `{"a": 1, oops}`, at: 3,
			errHas: "tool arguments are not valid JSON: invalid character 'o' looking for beginning of object key string (after 10 bytes of the arguments)"}},
		stop: "tool_calls",
	},
	{
		name:   "arguments that are not an object",
		events: []string{start(0, "call_a", "f"), args(0, `[1, 2]`), finish("tool_calls"), done},
		calls:  []synthCall{{id: "call_a", name: "f", raw: `[1, 2]`, at: 2, errHas: "tool arguments are a JSON array, not an object"}},
		stop:   "tool_calls",
	},
	{
		name: "escaped surrogate pair split between fragments",
		events: []string{start(0, "call_a", "f"),
			calls(`{"index":0,"function":{"arguments":"{\"e\":\"\ud83d"}}`),
			calls(`{"index":0,"function":{"arguments":"\ude00 \u00e9\"}"}}`), finish("tool_calls"), done},
		calls: []synthCall{{id: "call_a", name: "f", raw: `{"e":"😀 é"}`, input: `{"e":"😀 é"}`, complete: true, at: 3}},
		stop:  "tool_calls",
	},
	{
		name: "UTF-8 sequence split between fragments",
		events: []string{start(0, "call_a", "f"),
			calls("{\"index\":0,\"function\":{\"arguments\":\"{\\\"e\\\":\\\"\xe2\x82\"}}"),
			calls("{\"index\":0,\"function\":{\"arguments\":\"\xac\\\"}\"}}"), finish("tool_calls"), done},
		calls: []synthCall{{id: "call_a", name: "f", raw: `{"e":"€"}`, input: `{"e":"€"}`, complete: true, at: 3}},
		stop:  "tool_calls",
	},
	{
		name: "other choices are ignored",
		events: []string{start(0, "call_a", "f"),
			`{"id":"chatcmpl-1","choices":[{"index":1,"delta":{"tool_calls":[{"index":0,"id":"call_z","function":{"name":"z","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			args(0, `{}`), finish("tool_calls"), done},
		calls: []synthCall{{id: "call_a", name: "f", raw: `{}`, input: `{}`, complete: true, at: 3}},
		stop:  "tool_calls",
	},
	{
		name: "the first choice named is read, whatever its index",
		events: []string{`{"id":"c","choices":[{"index":2,"delta":{"role":"assistant"}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_z","function":{"name":"z","arguments":"{}"}}]}},{"index":2,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"f","arguments":"{}"}}]}}]}`,
			`{"id":"c","choices":[{"index":2,"delta":{},"finish_reason":"tool_calls"}]}`, done},
		calls: []synthCall{{id: "call_a", name: "f", raw: `{}`, input: `{}`, complete: true, at: 2}},
		stop:  "tool_calls",
	},
	{
		name: "legacy function_call delta",
		events: []string{`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","function_call":{"name":"f","arguments":""}},"finish_reason":null}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"function_call":{"arguments":"{\"x\":1}"}},"finish_reason":null}]}`,
			finish("function_call"), done},
		calls: []synthCall{{name: "f", raw: `{"x":1}`, input: `{"x":1}`, complete: true, at: 2}},
		stop:  "function_call",
	},
	{
		name: "extra fields, comments, blank data and CRLF framing are ignored",
		events: []string{": OPENROUTER PROCESSING\n\n",
			`{"id":"c","choices":[{"index":0,"delta":{"reasoning":"hmm","channel":"analysis","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""},"extra_content":{"google":{"thought_signature":"sig"}}}]},"finish_reason":null}],"usage":null,"obfuscation":"abc"}`,
			"data:\n\n",
			"data:" + args(0, `{"k":[1,{"z":null}]}`) + "   \r\n\r\n",
			"event: message\r\ndata: " + finish("tool_calls") + "\r\n\r\n",
			done},
		calls: []synthCall{{id: "call_a", name: "f", raw: `{"k":[1,{"z":null}]}`, input: `{"k":[1,{"z":null}]}`, complete: true, at: 4}},
		stop:  "tool_calls",
	},
	{
		name:   "fragments that carry nothing start nothing",
		events: []string{calls(`{"index":3}`, `{"index":4,"type":"function","function":{"arguments":""}}`, `null`), finish("stop"), done},
		stop:   "stop",
	},
	{
		name:   "bad JSON in a chunk stops parsing",
		events: []string{start(0, "call_a", "f"), `{"choices":[,]}`, finish("tool_calls"), done},
		calls:  []synthCall{{id: "call_a", name: "f", at: 1, errHas: "bad event data"}},
		endErr: "bad event data at bytes {0}-{1}: invalid character ',' looking for beginning of value (after 13 bytes of the data)",
	},
	{
		name:   "a tool call field of the wrong type stops parsing",
		events: []string{start(0, "call_a", "f"), `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":7}}]}}]}`, done},
		calls:  []synthCall{{id: "call_a", name: "f", at: 1, errHas: "bad chunk"}},
		endErr: "bad chunk at bytes {0}-{1}: json: cannot use number value for field function.arguments",
	},
	{
		name:   "fields of the wrong type outside the choices are harmless",
		events: []string{`{"id":5,"object":["x"],"usage":"none","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","function":{"name":"f","arguments":"{}"}}]}}]}`, done},
		calls:  []synthCall{{id: "call_a", name: "f", raw: `{}`, input: `{}`, complete: true, at: 1}},
	},
	{
		name:   "nothing after [DONE] is read",
		events: []string{start(0, "call_a", "f"), done, start(1, "call_b", "g"), "garbage"},
		calls:  []synthCall{{id: "call_a", name: "f", input: `{}`, complete: true, at: 1}},
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
	data, ends := frame([]string{start(0, "call_a", "f"), args(0, `{"a":`)})
	errConn := errors.New("connection reset")
	r := io.MultiReader(bytes.NewReader(data), iotest.ErrReader(errConn))
	var res result
	err := New().Parse(context.Background(), r, &res)
	if !errors.Is(err, errConn) {
		t.Fatalf("Parse = %v, want it to wrap %v", err, errConn)
	}
	checkContract(t, &res)
	want := fmt.Sprintf("read error after byte %d: connection reset", ends[1])
	if res.Ends[0].Err != want {
		t.Errorf("End.Err = %q, want %q", res.Ends[0].Err, want)
	}
	if len(res.Calls) != 1 || res.Calls[0].Complete || !strings.Contains(res.Calls[0].Err, want) {
		t.Errorf("calls = %+v, want one incomplete call citing the read error", res.Calls)
	}
}
