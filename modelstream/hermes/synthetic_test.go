package hermes

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

// block wraps a JSON body in tool_call tags, the way Qwen writes them.
func block(body string) string { return "<tool_call>\n" + body + "\n</tool_call>" }

// synthCall is an expected call. It completes or ends just past the nth
// (1-based) occurrence of after in the text; after "" means the end of the text.
type synthCall struct {
	name, input, raw string
	complete         bool
	errHas           string
	after            string
	nth              int
}

func TestSynthetic(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		calls  []synthCall
		stop   string
		endErr string
	}{
		{
			name: "content before, between and after blocks",
			text: "Sure, let me check.\n" + block(`{"name": "a", "arguments": {"x": 1}}`) + "\nAnd also\n" +
				`<tool_call>{"name":"b","arguments":{}}</tool_call>` + "\nDone.",
			calls: []synthCall{
				{name: "a", input: `{"x":1}`, raw: "\n" + `{"name": "a", "arguments": {"x": 1}}` + "\n", complete: true, after: "</tool_call>", nth: 1},
				{name: "b", input: `{}`, raw: `{"name":"b","arguments":{}}`, complete: true, after: "</tool_call>", nth: 2},
			},
			stop: "eos",
		},
		{
			name:  "arguments before name",
			text:  `<tool_call>{"arguments": {"q": "x", "n": [1, {"m": null}]}, "name": "search"}</tool_call><|im_end|>`,
			calls: []synthCall{{name: "search", input: `{"q":"x","n":[1,{"m":null}]}`, raw: `{"arguments": {"q": "x", "n": [1, {"m": null}]}, "name": "search"}`, complete: true, after: "</tool_call>", nth: 1}},
			stop:  "im_end",
		},
		{
			name: "arguments as a JSON string (Granite)",
			text: block(`{"name": "f", "arguments": "{\"a\": [1, 2], \"b\": \"c\"}"}`) + block(`{"name": "g", "arguments": " "}`),
			calls: []synthCall{
				{name: "f", input: `{"a":[1,2],"b":"c"}`, raw: "\n" + `{"name": "f", "arguments": "{\"a\": [1, 2], \"b\": \"c\"}"}` + "\n", complete: true, after: "</tool_call>", nth: 1},
				{name: "g", input: `{}`, raw: "\n" + `{"name": "g", "arguments": " "}` + "\n", complete: true, after: "</tool_call>", nth: 2},
			},
			stop: "eos",
		},
		{
			name: "a ```json fence inside the block",
			text: "<tool_call>\n```json\n{\"name\": \"f\", \"arguments\": {\"k\": \"v\"}}\n```\n</tool_call>" +
				"<tool_call>```{\"name\":\"g\",\"arguments\":{}}```</tool_call>",
			calls: []synthCall{
				{name: "f", input: `{"k":"v"}`, raw: "\n```json\n{\"name\": \"f\", \"arguments\": {\"k\": \"v\"}}\n```\n", complete: true, after: "</tool_call>", nth: 1},
				{name: "g", input: `{}`, raw: "```{\"name\":\"g\",\"arguments\":{}}```", complete: true, after: "</tool_call>", nth: 2},
			},
			stop: "eos",
		},
		{
			name: "a tool_call inside think does not count",
			text: "<think>I could call <tool_call>{\"name\":\"no\",\"arguments\":{}}</tool_call> but I won't.</think>\n" +
				`<tool_call>{"name":"yes","arguments":{}}</tool_call>`,
			calls: []synthCall{{name: "yes", input: `{}`, raw: `{"name":"yes","arguments":{}}`, complete: true, after: "</tool_call>", nth: 2}},
			stop:  "eos",
		},
		{
			name: "an unclosed think holds no calls",
			text: `<think>maybe <tool_call>{"name":"no","arguments":{}}</tool_call>`,
			stop: "eos",
		},
		{
			name:  "im_end ends the turn and nothing after it is read",
			text:  `<tool_call>{"name":"a","arguments":{}}</tool_call><|im_end|><tool_call>{"name":"b","arguments":{}}</tool_call>`,
			calls: []synthCall{{name: "a", input: `{}`, raw: `{"name":"a","arguments":{}}`, complete: true, after: "</tool_call>", nth: 1}},
			stop:  "im_end",
		},
		{
			name:  "im_end inside think",
			text:  `<think>hmm<|im_end|><tool_call>{"name":"a","arguments":{}}</tool_call>`,
			stop:  "im_end",
			calls: nil,
		},
		{
			name:  "a block not closed at EOF",
			text:  "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"path\": \"/tm",
			calls: []synthCall{{raw: "\n{\"name\": \"f\", \"arguments\": {\"path\": \"/tm", errHas: "tool call not closed before the end of the text"}},
			stop:  "eos",
		},
		{
			name:  "a whole JSON block not closed at EOF is still not runnable",
			text:  `<tool_call>{"name":"f","arguments":{}}</tool_`,
			calls: []synthCall{{name: "f", raw: `{"name":"f","arguments":{}}</tool_`, errHas: "tool call not closed before the end of the text"}},
			stop:  "eos",
		},
		{
			name:  "a block not closed at im_end",
			text:  `<tool_call>{"name":"f","arguments":{}}<|im_end|>trailing`,
			calls: []synthCall{{name: "f", raw: `{"name":"f","arguments":{}}`, errHas: "tool call not closed before the end of the text", after: "<|im_end|>", nth: 1}},
			stop:  "im_end",
		},
		{
			name: "invalid JSON in a block",
			text: block(`{"name": "f", "arguments": {"a": 1,}}`) + block(`{"name":"g","arguments":{}}`),
			calls: []synthCall{
				{raw: "\n" + `{"name": "f", "arguments": {"a": 1,}}` + "\n", after: "</tool_call>", nth: 1,
					errHas: "tool call is not valid JSON: invalid character '}' looking for beginning of object key string (after 36 bytes of the block)"},
				{name: "g", input: `{}`, raw: "\n" + `{"name":"g","arguments":{}}` + "\n", complete: true, after: "</tool_call>", nth: 2},
			},
			stop: "eos",
		},
		{
			name: "blocks of the wrong shape",
			text: block(`[{"name":"f"}]`) + block(`{"arguments":{}}`) + block(`{"name":"","arguments":{}}`) +
				block(`{"name":"f","arguments":[1]}`) + block(`{"name":"f","arguments":"not json"}`) + "<tool_call>\n</tool_call>" +
				block(`null`) + block(`{"name":"f"} {"name":"g"}`) + block(`{"name":7}`),
			calls: []synthCall{
				{raw: "\n[{\"name\":\"f\"}]\n", errHas: "tool call is a JSON array, not an object", after: "</tool_call>", nth: 1},
				{raw: "\n{\"arguments\":{}}\n", errHas: `tool call has no "name"`, after: "</tool_call>", nth: 2},
				{raw: "\n{\"name\":\"\",\"arguments\":{}}\n", errHas: `tool call "name" is "\"\"", not a non-empty string`, after: "</tool_call>", nth: 3},
				{name: "f", raw: "\n{\"name\":\"f\",\"arguments\":[1]}\n", errHas: "tool call arguments is a JSON array, not an object", after: "</tool_call>", nth: 4},
				{name: "f", raw: "\n{\"name\":\"f\",\"arguments\":\"not json\"}\n", errHas: "tool call arguments is a string that is not JSON", after: "</tool_call>", nth: 5},
				{raw: "\n", errHas: "tool call block is empty", after: "</tool_call>", nth: 6},
				{raw: "\nnull\n", errHas: "tool call is JSON null, not an object", after: "</tool_call>", nth: 7},
				{raw: "\n{\"name\":\"f\"} {\"name\":\"g\"}\n", errHas: "tool call is not valid JSON: invalid character '{' after top-level value", after: "</tool_call>", nth: 8},
				{raw: "\n{\"name\":7}\n", errHas: `tool call "name" is "7", not a non-empty string`, after: "</tool_call>", nth: 9},
			},
			stop: "eos",
		},
		{
			name: "missing or null arguments, and parameters",
			text: block(`{"name":"f"}`) + block(`{"name":"g","arguments":null}`) + block(`{"name":"h","parameters":{"a":1}}`),
			calls: []synthCall{
				{name: "f", input: `{}`, raw: "\n{\"name\":\"f\"}\n", complete: true, after: "</tool_call>", nth: 1},
				{name: "g", input: `{}`, raw: "\n{\"name\":\"g\",\"arguments\":null}\n", complete: true, after: "</tool_call>", nth: 2},
				{name: "h", input: `{"a":1}`, raw: "\n{\"name\":\"h\",\"parameters\":{\"a\":1}}\n", complete: true, after: "</tool_call>", nth: 3},
			},
			stop: "eos",
		},
		{
			name:  "partial and stray tags in the content",
			text:  `a < b, <tool and </tool_call> and <|im_start|> <|im_en and <<tool_call>{"name":"f","arguments":{}}</tool_call>`,
			calls: []synthCall{{name: "f", input: `{}`, raw: `{"name":"f","arguments":{}}`, complete: true, after: "</tool_call>", nth: 2}},
			stop:  "eos",
		},
		{
			name:  "tag-like text inside a block",
			text:  `<tool_call>{"name":"f","arguments":{"s":"<b>bold</b> <tool_call> <think> <</tool"}}</tool_call>`,
			calls: []synthCall{{name: "f", input: `{"s":"<b>bold</b> <tool_call> <think> <</tool"}`, raw: `{"name":"f","arguments":{"s":"<b>bold</b> <tool_call> <think> <</tool"}}`, complete: true, after: "</tool_call>", nth: 1}},
			stop:  "eos",
		},
		{
			name:  "non-ASCII arguments",
			text:  `<tool_call>{"name":"météo","arguments":{"city":"Zürich 😀","esc":"\u00e9"}}</tool_call>`,
			calls: []synthCall{{name: "météo", input: `{"city":"Zürich 😀","esc":"\u00e9"}`, raw: `{"name":"météo","arguments":{"city":"Zürich 😀","esc":"\u00e9"}}`, complete: true, after: "</tool_call>", nth: 1}},
			stop:  "eos",
		},
		{
			name: "text that ends in a partial tag",
			text: "hello <tool_",
			stop: "eos",
		},
		{
			name: "empty input",
			stop: "eos",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.text)
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
					if w.after != "" {
						wantAt = pastNth(t, data, w.after, w.nth)
					}
					var wantInput json.RawMessage
					if w.complete {
						wantInput = json.RawMessage(w.input)
					}
					if !idPattern.MatchString(c.ID) || c.Name != w.name || c.RawInput != w.raw || c.Complete != w.complete ||
						!bytes.Equal(c.Input, wantInput) || c.At != wantAt {
						t.Errorf("%s: call %d = %+v (Input %s)\nwant Name %q RawInput %q Complete %v Input %s At %d",
							feed.name, i, c, c.Input, w.name, w.raw, w.complete, wantInput, wantAt)
					}
					if (w.errHas == "") != (c.Err == "") || !strings.Contains(c.Err, w.errHas) {
						t.Errorf("%s: call %d Err = %q, want it to contain %q", feed.name, i, c.Err, w.errHas)
					}
				}
				end := res.Ends[0]
				if end.StopReason != tt.stop {
					t.Errorf("%s: StopReason = %q, want %q", feed.name, end.StopReason, tt.stop)
				}
				if (tt.endErr == "") != (end.Err == "") || !strings.Contains(end.Err, tt.endErr) {
					t.Errorf("%s: End.Err = %q, want it to contain %q", feed.name, end.Err, tt.endErr)
				}
			}
		})
	}
}

// pastNth is the offset just past the nth (1-based) occurrence of s in data.
func pastNth(t *testing.T, data []byte, s string, nth int) int64 {
	t.Helper()
	off := 0
	for k := range nth {
		i := bytes.Index(data[off:], []byte(s))
		if i < 0 {
			t.Fatalf("occurrence %d of %q not in the text", k+1, s)
		}
		off += i + len(s)
	}
	return int64(off)
}

func TestIDs(t *testing.T) {
	ids := func(text string) []string {
		t.Helper()
		var out []string
		for _, c := range parse(t, strings.NewReader(text)).Calls {
			out = append(out, c.ID)
		}
		return out
	}
	two := block(`{"name":"f","arguments":{}}`) + block(`{"name":"f","arguments":{}}`)
	a := ids(two)
	if len(a) != 2 || a[0] == a[1] {
		t.Fatalf("ids %v: want two different ids", a)
	}
	if b := ids(two); b[0] != a[0] || b[1] != a[1] {
		t.Errorf("same text gave ids %v and %v", a, b)
	}
	if b := ids("Let me see.\n" + two); b[0] == a[0] || b[1] == a[1] {
		t.Errorf("other text before the calls gave the same ids %v", b)
	}
	// The id of a call does not depend on the text after it.
	if b := ids(two + "and more"); b[0] != a[0] || b[1] != a[1] {
		t.Errorf("text after the calls changed the ids: %v, want %v", b, a)
	}
}

func TestHandlerErrorStops(t *testing.T) {
	text := block(`{"name":"f","arguments":{}}`) + block(`{"name":"g","arguments":{}}`)
	streamtest.CheckHandlerErrorStops(t, New(), []byte(text))
}

func TestContextCancelled(t *testing.T) {
	// Both blocks arrive in one read: cancelling in the first call stops the second.
	text := block(`{"name":"f","arguments":{}}`) + block(`{"name":"g","arguments":{}}`)
	streamtest.CheckContextCancelled(t, New(), []byte(text))
}

func TestReadError(t *testing.T) {
	text := block(`{"name":"f","arguments":{}}`) + `<tool_call>{"name":"g","argu`
	res, want := streamtest.CheckReadError(t, New(), []byte(text), contract)
	if res.Ends[0].StopReason != "" {
		t.Errorf("End = %+v, want no stop reason", res.Ends[0])
	}
	if len(res.Calls) != 2 || !res.Calls[0].Complete || res.Calls[1].Complete ||
		!strings.Contains(res.Calls[1].Err, notClosedErr) || !strings.Contains(res.Calls[1].Err, want) {
		t.Errorf("calls = %+v, want f complete and g not closed, citing the read error", res.Calls)
	}
}
