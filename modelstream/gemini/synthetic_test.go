package gemini

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

// chunk is a GenerateContentResponse whose candidate 0 holds parts.
func chunk(parts ...string) string {
	return `{"candidates":[{"content":{"role":"model","parts":[` + strings.Join(parts, ",") +
		`]},"index":0}],"usageMetadata":{"promptTokenCount":5},"responseId":"resp_1"}`
}

// call is a whole functionCall part; args "" leaves args out.
func call(name, args string) string {
	if args == "" {
		return fmt.Sprintf(`{"functionCall":{"name":%q}}`, name)
	}
	return fmt.Sprintf(`{"functionCall":{"name":%q,"args":%s},"thoughtSignature":"c2lnbmF0dXJl"}`, name, args)
}

func callID(id, name, args string) string {
	return fmt.Sprintf(`{"functionCall":{"id":%q,"name":%q,"args":%s}}`, id, name, args)
}

// opener starts a Vertex streamed call.
func opener(name string) string {
	return fmt.Sprintf(`{"functionCall":{"name":%q,"willContinue":true}}`, name)
}

// partial is a functionCall part with partialArgs; more is its willContinue.
func partial(more bool, args ...string) string {
	if more {
		return chunk(`{"functionCall":{"partialArgs":[` + strings.Join(args, ",") + `],"willContinue":true}}`)
	}
	return chunk(`{"functionCall":{"partialArgs":[` + strings.Join(args, ",") + `]}}`)
}

// pstr is a string partialArg.
func pstr(path, v string, more bool) string {
	q, _ := json.Marshal(v)
	if more {
		return fmt.Sprintf(`{"jsonPath":%q,"stringValue":%s,"willContinue":true}`, path, q)
	}
	return fmt.Sprintf(`{"jsonPath":%q,"stringValue":%s}`, path, q)
}

func pval(path, field, v string) string {
	return fmt.Sprintf(`{"jsonPath":%q,%q:%s}`, path, field, v)
}

const (
	closer   = `{"functionCall":{}}`
	keepOpen = `{"functionCall":{"willContinue":true}}`
	text     = `{"text":"Let me look."}`
	overload = `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`
)

func finish(reason string) string {
	return fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":%q,"index":0}],"usageMetadata":{"totalTokenCount":9},"responseId":"resp_1"}`, reason)
}

var stop = finish("STOP")

// synthCall is an expected call; at is the position in the case's event
// list of the event that completes or ends it, -1 for the end of the input.
type synthCall struct {
	// id "" wants a synthesized id.
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
		// replaced by the input length, {N} by the end of event N.
		endErr string
	}{
		{
			name:   "parallel calls across chunks and in one chunk",
			events: []string{chunk(text), chunk(call("f", `{"a": 1}`)), chunk(call("g", ""), text, call("h", `{"b": [1, 2], "c": {"d": null}}`)), stop},
			calls: []synthCall{
				{name: "f", input: `{"a":1}`, raw: `{"a": 1}`, complete: true, at: 1},
				{name: "g", input: `{}`, complete: true, at: 2},
				{name: "h", input: `{"b":[1,2],"c":{"d":null}}`, raw: `{"b": [1, 2], "c": {"d": null}}`, complete: true, at: 2},
			},
			stop: "STOP",
		},
		{
			name:   "args omitted or null is the empty object",
			events: []string{chunk(call("f", "")), chunk(call("g", "null")), stop},
			calls: []synthCall{
				{name: "f", input: `{}`, complete: true, at: 0},
				{name: "g", input: `{}`, raw: `null`, complete: true, at: 1},
			},
			stop: "STOP",
		},
		{
			name:   "the provider's id is kept",
			events: []string{chunk(callID("fc_1", "f", `{"x":"y"}`), callID("fc_2", "f", `{}`)), stop},
			calls: []synthCall{
				{id: "fc_1", name: "f", input: `{"x":"y"}`, raw: `{"x":"y"}`, complete: true, at: 0},
				{id: "fc_2", name: "f", input: `{}`, raw: `{}`, complete: true, at: 0},
			},
			stop: "STOP",
		},
		{
			name:   "args that are not an object",
			events: []string{chunk(call("f", `[1]`), call("g", `"s"`)), stop},
			calls: []synthCall{
				{name: "f", raw: `[1]`, errHas: "tool call args is a JSON array, not an object", at: 0},
				{name: "g", raw: `"s"`, errHas: "tool call args is a JSON string, not an object", at: 0},
			},
			stop: "STOP",
		},
		{
			name: "streamed args: nested objects, arrays, strings going on, other types",
			events: []string{
				chunk(opener("cook")),
				partial(true, pstr("$.recipe.name", "Lasa", true)),
				partial(true, pstr("$.recipe.name", "gna", false)),
				partial(true, pval("$.recipe.servings", "numberValue", "4")),
				partial(true, pstr("$.recipe.ingredients[0].name", "noodles", false), pstr("$.recipe.ingredients[0].amount", "16 oz", false)),
				partial(true, pstr("$.recipe.ingredients[1].name", "beef ", true)),
				chunk(keepOpen),
				partial(true, pstr("$.recipe.ingredients[1].name", "mince", true)),
				partial(true, pstr("$.recipe.ingredients[1].name", "", false)),
				partial(true, pval("$.vegan", "boolValue", "false"), pval("$.notes", "nullValue", "null")),
				partial(true, pstr("$['odd key'][\"x\"]", "y\"\n", false), pval("$.n", "numberValue", `"1.5"`), pval("$.z", "nullValue", `"NULL_VALUE"`)),
				chunk(closer),
				stop,
			},
			calls: []synthCall{{
				name:     "cook",
				input:    `{"recipe":{"name":"Lasagna","servings":4,"ingredients":[{"name":"noodles","amount":"16 oz"},{"name":"beef mince"}]},"vegan":false,"notes":null,"odd key":{"x":"y\"\n"},"n":1.5,"z":null}`,
				raw:      `{"recipe":{"name":"Lasagna","servings":4,"ingredients":[{"name":"noodles","amount":"16 oz"},{"name":"beef mince"}]},"vegan":false,"notes":null,"odd key":{"x":"y\"\n"},"n":1.5,"z":null}`,
				complete: true, at: 11,
			}},
			stop: "STOP",
		},
		{
			name: "a string without willContinue is replaced, not continued",
			events: []string{chunk(opener("f")),
				partial(true, pstr("$.s", "ab", false)), partial(true, pstr("$.s", "cd", false)),
				partial(true, pstr("$.t", "ab", true), pstr("$.u", "1", false), pstr("$.t", "cd", true)), partial(true, pstr("$.t", "", false)),
				chunk(closer), stop},
			calls: []synthCall{{name: "f", input: `{"s":"cd","t":"abcd","u":"1"}`, raw: `{"s":"cd","t":"abcd","u":"1"}`, complete: true, at: 5}},
			stop:  "STOP",
		},
		{
			name: "the last partialArgs part without willContinue ends the call (vercel/ai#14358)",
			events: []string{chunk(opener("write")),
				partial(true, pstr("$.ops[0].a", "add", true)), partial(true, pstr("$.ops[0].a", "", false)),
				partial(false, pval("$.ops[0].price", "numberValue", "0.5")), stop},
			calls: []synthCall{{name: "write", input: `{"ops":[{"a":"add","price":0.5}]}`, raw: `{"ops":[{"a":"add","price":0.5}]}`, complete: true, at: 3}},
			stop:  "STOP",
		},
		{
			name:   "a missing closing part: the call completes at finishReason STOP (vercel/ai#15438)",
			events: []string{chunk(opener("f")), partial(true, pstr("$.q", "x", false)), stop},
			calls:  []synthCall{{name: "f", input: `{"q":"x"}`, raw: `{"q":"x"}`, complete: true, at: 2}},
			stop:   "STOP",
		},
		{
			name:   "an open call cut off by MAX_TOKENS",
			events: []string{chunk(opener("f")), partial(true, pstr("$.q", "x", true)), finish("MAX_TOKENS")},
			calls: []synthCall{{name: "f", raw: `{"q":"x"}`, at: 2,
				errHas: "tool call incomplete: the stream ended before the streamed functionCall was complete (finishReason MAX_TOKENS)"}},
			stop: "MAX_TOKENS",
		},
		{
			name:   "EOF before finishReason",
			events: []string{chunk(call("f", `{}`)), chunk(opener("g")), partial(true, pstr("$.q", "x", true))},
			calls: []synthCall{
				{name: "f", input: `{}`, raw: `{}`, complete: true, at: 0},
				{name: "g", raw: `{"q":"x"}`, at: -1, errHas: "(stream ended before a finishReason at byte {len})"},
			},
			endErr: "stream ended before a finishReason at byte {len}",
		},
		{
			name:   "EOF inside a call opened after finishReason",
			events: []string{stop, chunk(opener("f"))},
			calls:  []synthCall{{name: "f", raw: `{}`, at: -1, errHas: "finishReason STOP; stream ended inside a streamed functionCall at byte {len}"}},
			stop:   "STOP",
			endErr: "stream ended inside a streamed functionCall at byte {len}",
		},
		{
			name:   "error chunk after HTTP 200",
			events: []string{chunk(call("f", `{}`)), chunk(opener("g")), overload, chunk(call("h", `{}`)), stop},
			calls: []synthCall{
				{name: "f", input: `{}`, raw: `{}`, complete: true, at: 0},
				{name: "g", raw: `{}`, at: 2, errHas: "(error chunk at bytes {1}-{2}: 503 UNAVAILABLE: The model is overloaded. Please try again later.)"},
			},
			endErr: "error chunk at bytes {1}-{2}: 503 UNAVAILABLE: The model is overloaded. Please try again later.",
		},
		{
			name:   "error chunk whose error is a string",
			events: []string{chunk(text), `{"error":"quota exceeded"}`},
			endErr: "error chunk at bytes {0}-{1}: quota exceeded",
		},
		{
			name:   "raw JSON error body after the last event",
			events: []string{chunk(call("f", `{}`)), "raw:" + `{"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}` + "\n"},
			calls:  []synthCall{{name: "f", input: `{}`, raw: `{}`, complete: true, at: 0}},
			endErr: "non-SSE data after the last event, at bytes {0}-{len}: 500 INTERNAL: Internal error encountered.",
		},
		{
			name: "pretty-printed error array after a finished stream",
			events: []string{chunk(call("f", `{}`)), stop,
				"raw:[{\r\n  \"error\": {\r\n    \"code\": 429,\r\n    \"message\": \"Resource exhausted.\",\r\n    \"status\": \"RESOURCE_EXHAUSTED\"\r\n  }\r\n}\r\n]"},
			calls:  []synthCall{{name: "f", input: `{}`, raw: `{}`, complete: true, at: 0}},
			stop:   "STOP",
			endErr: "non-SSE data after the last event, at bytes {1}-{len}: 429 RESOURCE_EXHAUSTED: Resource exhausted.",
		},
		{
			name:   "error body glued to the last event without a blank line",
			events: []string{chunk(call("f", `{}`)), "data: " + stop + "\r\n" + `{"error":{"code":503,"status":"UNAVAILABLE","message":"Try later."}}`},
			calls:  []synthCall{{name: "f", input: `{}`, raw: `{}`, complete: true, at: 0}},
			stop:   "STOP",
			endErr: "non-SSE data after the last event, at bytes ",
		},
		{
			name:   "text that is not JSON after the last event",
			events: []string{stop, "raw:upstream request timeout"},
			stop:   "STOP",
			endErr: `non-SSE data after the last event, at bytes {0}-{len}: "upstream request timeout"`,
		},
		{
			name:   "comments and blank lines after the last event are no tail",
			events: []string{stop, ": keepalive\n\n", "raw:\r\n\n: bye\n"},
			stop:   "STOP",
		},
		{
			name:   "chunks without content",
			events: []string{`{"candidates":[{"index":0}]}`, `{"usageMetadata":{"promptTokenCount":1}}`, chunk(call("f", `{}`)), `{"candidates":[{"finishReason":"STOP"}]}`},
			calls:  []synthCall{{name: "f", input: `{}`, raw: `{}`, complete: true, at: 2}},
			stop:   "STOP",
		},
		{
			name:   "bad chunk data stops parsing",
			events: []string{chunk(call("f", `{}`)), `{"candidates":[`, chunk(call("g", `{}`)), stop},
			calls:  []synthCall{{name: "f", input: `{}`, raw: `{}`, complete: true, at: 0}},
			endErr: "bad chunk data at bytes {0}-{1}: unexpected end of JSON input",
		},
		{
			name:   "a field of the wrong type is bad chunk data",
			events: []string{chunk(`{"functionCall":{"name":7}}`), stop},
			endErr: "bad chunk data at bytes 0-{0}: json: cannot unmarshal number",
		},
		{
			name:   "a new call while a streamed one is open",
			events: []string{chunk(opener("f")), partial(true, pstr("$.a", "x", false)), chunk(call("g", `{}`)), stop},
			calls: []synthCall{
				{name: "f", raw: `{"a":"x"}`, at: 2, errHas: "a new functionCall began at bytes {1}-{2} before its last part"},
				{name: "g", input: `{}`, raw: `{}`, complete: true, at: 2},
			},
			stop: "STOP",
		},
		{
			name:   "partialArgs with no call open",
			events: []string{partial(false, pstr("$.a", "x", false)), stop},
			calls:  []synthCall{{raw: `{"a":"x"}`, at: 0, errHas: "tool call has no name"}},
			stop:   "STOP",
		},
		{
			name:   "stray closing and keep-open parts are ignored",
			events: []string{chunk(closer), chunk(keepOpen), chunk(`{"functionCall":{"args":null}}`), stop},
			stop:   "STOP",
		},
		{
			name: "only candidate 0 is read",
			events: []string{`{"candidates":[{"content":{"parts":[` + call("alt", `{}`) + `]},"index":1},{"content":{"parts":[` + call("g", `{}`) + `]},"index":0}]}`,
				`{"candidates":[{"finishReason":"MAX_TOKENS","index":1},{"finishReason":"STOP"}]}`},
			calls: []synthCall{{name: "g", input: `{}`, raw: `{}`, complete: true, at: 0}},
			stop:  "STOP",
		},
		{
			name:   "a jsonPath that names no single place",
			events: []string{chunk(opener("f")), partial(true, pstr("$.a[*]", "x", false)), chunk(closer), stop},
			calls:  []synthCall{{name: "f", raw: `{}`, at: 2, errHas: `tool call partialArgs: jsonPath "$.a[*]" has a selector starting with '*'`}},
			stop:   "STOP",
		},
		{
			name:   "paths that conflict",
			events: []string{chunk(opener("f")), partial(true, pstr("$.a", "x", false)), partial(true, pstr("$.a.b", "y", false)), chunk(closer), stop},
			calls:  []synthCall{{name: "f", raw: `{"a":"x"}`, at: 3, errHas: `jsonPath "$.a.b" sets a path through a string`}},
			stop:   "STOP",
		},
		{
			name:   "an array element never set",
			events: []string{chunk(opener("f")), partial(true, pstr("$.a[1]", "x", false)), chunk(closer), stop},
			calls:  []synthCall{{name: "f", raw: `{"a":[null,"x"]}`, at: 2, errHas: "tool call partialArgs left an array element unset"}},
			stop:   "STOP",
		},
		{
			name:   "a number with no JSON form",
			events: []string{chunk(opener("f")), partial(false, pval("$.a", "numberValue", `"NaN"`)), stop},
			calls:  []synthCall{{name: "f", raw: `{}`, at: 1, errHas: `numberValue "NaN" has no JSON form`}},
			stop:   "STOP",
		},
		{
			name: "an opener with args and an id seeds the streamed call",
			events: []string{chunk(`{"functionCall":{"id":"fc_9","name":"f","args":{"k":1,"s":"old"},"willContinue":true}}`),
				partial(true, pstr("$.s", "new", false)), chunk(closer), stop},
			calls: []synthCall{{id: "fc_9", name: "f", input: `{"k":1,"s":"new"}`, raw: `{"k":1,"s":"new"}`, complete: true, at: 2}},
			stop:  "STOP",
		},
		{
			name:   "a blocked prompt",
			events: []string{`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":3}}`},
			stop:   "SAFETY",
		},
		{
			name:   "[DONE], blank data and comments are ignored",
			events: []string{": hello\n\n", chunk(call("f", `{}`)), "data: [DONE]\n\n", "data:\n\n", stop},
			calls:  []synthCall{{name: "f", input: `{}`, raw: `{}`, complete: true, at: 1}},
			stop:   "STOP",
		},
		{
			name:   "CRLF, lone CR and data without a space",
			events: []string{"data:" + chunk(call("f", `{"a":"b"}`)) + "\r\n\r\n", "data:" + chunk(call("g", `{}`)) + "\r\r", "data:" + stop + "\r\n"},
			calls: []synthCall{
				{name: "f", input: `{"a":"b"}`, raw: `{"a":"b"}`, complete: true, at: 0},
				{name: "g", input: `{}`, raw: `{}`, complete: true, at: 1},
			},
			stop: "STOP",
		},
		{
			// The SSE reader drops a byte order mark only at the start: later,
			// the line it begins is not SSE, and so a tail.
			name:   "a byte order mark is allowed only at the start",
			events: []string{"raw:\xEF\xBB\xBFdata: " + chunk(call("f", `{}`)) + "\n\n", "raw:\xEF\xBB\xBFdata: " + stop + "\n\n"},
			calls:  []synthCall{{name: "f", input: `{}`, raw: `{}`, complete: true, at: 0}},
			endErr: "non-SSE data after the last event, at bytes {0}-{len}",
		},
		{
			name: "a continuation part with args merges them",
			events: []string{chunk(opener("f")), partial(true, pstr("$.a", "x", false)),
				chunk(`{"functionCall":{"args":{"b":[true]},"willContinue":true}}`), chunk(`{"functionCall":{"args":{"a":"y"}}}`), stop},
			calls: []synthCall{{name: "f", input: `{"a":"y","b":[true]}`, raw: `{"a":"y","b":[true]}`, complete: true, at: 3}},
			stop:  "STOP",
		},
		{
			name:   "an error event",
			events: []string{chunk(text), "event: error\ndata: upstream failure\n\n"},
			endErr: `error event at bytes {0}-{1}: "upstream failure"`,
		},
		{
			name:   "empty input",
			endErr: "stream ended before a finishReason at byte 0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, ends := frame(tt.events)
			subst := func(s string) string {
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
					idOK := c.ID == w.id
					if w.id == "" {
						idOK = strings.HasPrefix(c.ID, fmt.Sprintf("call_gemini_%d_", i))
					}
					if !idOK || c.Name != w.name || c.RawInput != w.raw || c.Complete != w.complete ||
						!bytes.Equal(c.Input, wantInput) || c.At != wantAt {
						t.Errorf("%s: call %d = %+v (Input %s)\nwant ID %q Name %q RawInput %q Complete %v Input %s At %d",
							feed.name, i, c, c.Input, w.id, w.name, w.raw, w.complete, wantInput, wantAt)
					}
					errHas := subst(w.errHas)
					if (errHas == "") != (c.Err == "") || !strings.Contains(c.Err, errHas) {
						t.Errorf("%s: call %d Err = %q, want it to contain %q", feed.name, i, c.Err, errHas)
					}
				}
				end := res.Ends[0]
				if end.StopReason != tt.stop {
					t.Errorf("%s: StopReason = %q, want %q", feed.name, end.StopReason, tt.stop)
				}
				endErr := subst(tt.endErr)
				if (endErr == "") != (end.Err == "") || !strings.Contains(end.Err, endErr) {
					t.Errorf("%s: End.Err = %q, want it to contain %q", feed.name, end.Err, endErr)
				}
			}
		})
	}
}

func TestSyntheticID(t *testing.T) {
	stream := func(respID, args string) []byte {
		data, _ := frame([]string{strings.Replace(chunk(call("f", args)), "resp_1", respID, 1), stop})
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
	a := id(stream("r1", `{"x":1}`))
	if b := id(stream("r1", `{"x":1}`)); b != a {
		t.Errorf("same stream gave ids %q and %q", a, b)
	}
	if b := id(stream("r2", `{"x":1}`)); b == a {
		t.Errorf("another response gave the same id %q", a)
	}
	if b := id(stream("r1", `{"x":2}`)); b == a {
		t.Errorf("another input gave the same id %q", a)
	}
}

func TestHandlerErrorStops(t *testing.T) {
	data, _ := frame([]string{chunk(call("f", `{}`)), chunk(call("g", `{}`)), stop})
	streamtest.CheckHandlerErrorStops(t, New(), data)
}

func TestContextCancelled(t *testing.T) {
	// Two calls in one chunk: cancelling in the first stops the second too.
	data, _ := frame([]string{chunk(call("f", `{}`), call("g", `{}`)), chunk(call("h", `{}`)), stop})
	streamtest.CheckContextCancelled(t, New(), data)
}

func TestReadError(t *testing.T) {
	data, ends := frame([]string{chunk(call("f", `{}`)), chunk(opener("g")), partial(true, pstr("$.a", "x", true))})
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
	if len(res.Calls) != 2 || !res.Calls[0].Complete || res.Calls[1].Complete || !strings.Contains(res.Calls[1].Err, want) {
		t.Errorf("calls = %+v, want f complete and g incomplete citing the read error", res.Calls)
	}
}
