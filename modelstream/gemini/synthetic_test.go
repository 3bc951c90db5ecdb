package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

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
type synthCall = streamtest.WantCall

func TestSynthetic(t *testing.T) {
	tests := []streamtest.Case{
		{
			Name:   "parallel calls across chunks and in one chunk",
			Events: []string{chunk(text), chunk(call("f", `{"a": 1}`)), chunk(call("g", ""), text, call("h", `{"b": [1, 2], "c": {"d": null}}`)), stop},
			Calls: []synthCall{
				{Name: "f", Input: `{"a":1}`, Raw: `{"a": 1}`, Complete: true, At: 1},
				{Name: "g", Input: `{}`, Complete: true, At: 2},
				{Name: "h", Input: `{"b":[1,2],"c":{"d":null}}`, Raw: `{"b": [1, 2], "c": {"d": null}}`, Complete: true, At: 2},
			},
			Stop: "STOP",
		},
		{
			Name:   "args omitted or null is the empty object",
			Events: []string{chunk(call("f", "")), chunk(call("g", "null")), stop},
			Calls: []synthCall{
				{Name: "f", Input: `{}`, Complete: true, At: 0},
				{Name: "g", Input: `{}`, Raw: `null`, Complete: true, At: 1},
			},
			Stop: "STOP",
		},
		{
			Name:   "the provider's id is kept",
			Events: []string{chunk(callID("fc_1", "f", `{"x":"y"}`), callID("fc_2", "f", `{}`)), stop},
			Calls: []synthCall{
				{ID: "fc_1", Name: "f", Input: `{"x":"y"}`, Raw: `{"x":"y"}`, Complete: true, At: 0},
				{ID: "fc_2", Name: "f", Input: `{}`, Raw: `{}`, Complete: true, At: 0},
			},
			Stop: "STOP",
		},
		{
			Name:   "args that are not an object",
			Events: []string{chunk(call("f", `[1]`), call("g", `"s"`)), stop},
			Calls: []synthCall{
				{Name: "f", Raw: `[1]`, ErrHas: "tool call args is a JSON array, not an object", At: 0},
				{Name: "g", Raw: `"s"`, ErrHas: "tool call args is a JSON string, not an object", At: 0},
			},
			Stop: "STOP",
		},
		{
			Name: "streamed args: nested objects, arrays, strings going on, other types",
			Events: []string{
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
			Calls: []synthCall{{
				Name:     "cook",
				Input:    `{"recipe":{"name":"Lasagna","servings":4,"ingredients":[{"name":"noodles","amount":"16 oz"},{"name":"beef mince"}]},"vegan":false,"notes":null,"odd key":{"x":"y\"\n"},"n":1.5,"z":null}`,
				Raw:      `{"recipe":{"name":"Lasagna","servings":4,"ingredients":[{"name":"noodles","amount":"16 oz"},{"name":"beef mince"}]},"vegan":false,"notes":null,"odd key":{"x":"y\"\n"},"n":1.5,"z":null}`,
				Complete: true, At: 11,
			}},
			Stop: "STOP",
		},
		{
			Name: "a string without willContinue is replaced, not continued",
			Events: []string{chunk(opener("f")),
				partial(true, pstr("$.s", "ab", false)), partial(true, pstr("$.s", "cd", false)),
				partial(true, pstr("$.t", "ab", true), pstr("$.u", "1", false), pstr("$.t", "cd", true)), partial(true, pstr("$.t", "", false)),
				chunk(closer), stop},
			Calls: []synthCall{{Name: "f", Input: `{"s":"cd","t":"abcd","u":"1"}`, Raw: `{"s":"cd","t":"abcd","u":"1"}`, Complete: true, At: 5}},
			Stop:  "STOP",
		},
		{
			Name: "the last partialArgs part without willContinue ends the call (vercel/ai#14358)",
			Events: []string{chunk(opener("write")),
				partial(true, pstr("$.ops[0].a", "add", true)), partial(true, pstr("$.ops[0].a", "", false)),
				partial(false, pval("$.ops[0].price", "numberValue", "0.5")), stop},
			Calls: []synthCall{{Name: "write", Input: `{"ops":[{"a":"add","price":0.5}]}`, Raw: `{"ops":[{"a":"add","price":0.5}]}`, Complete: true, At: 3}},
			Stop:  "STOP",
		},
		{
			Name:   "a missing closing part: the call completes at finishReason STOP (vercel/ai#15438)",
			Events: []string{chunk(opener("f")), partial(true, pstr("$.q", "x", false)), stop},
			Calls:  []synthCall{{Name: "f", Input: `{"q":"x"}`, Raw: `{"q":"x"}`, Complete: true, At: 2}},
			Stop:   "STOP",
		},
		{
			Name:   "an open call cut off by MAX_TOKENS",
			Events: []string{chunk(opener("f")), partial(true, pstr("$.q", "x", true)), finish("MAX_TOKENS")},
			Calls: []synthCall{{Name: "f", Raw: `{"q":"x"}`, At: 2,
				ErrHas: "tool call incomplete: the stream ended before the streamed functionCall was complete (finishReason MAX_TOKENS)"}},
			Stop: "MAX_TOKENS",
		},
		{
			Name:   "EOF before finishReason",
			Events: []string{chunk(call("f", `{}`)), chunk(opener("g")), partial(true, pstr("$.q", "x", true))},
			Calls: []synthCall{
				{Name: "f", Input: `{}`, Raw: `{}`, Complete: true, At: 0},
				{Name: "g", Raw: `{"q":"x"}`, At: -1, ErrHas: "(stream ended before a finishReason at byte {len})"},
			},
			EndErr: "stream ended before a finishReason at byte {len}",
		},
		{
			Name:   "EOF inside a call opened after finishReason",
			Events: []string{stop, chunk(opener("f"))},
			Calls:  []synthCall{{Name: "f", Raw: `{}`, At: -1, ErrHas: "finishReason STOP; stream ended inside a streamed functionCall at byte {len}"}},
			Stop:   "STOP",
			EndErr: "stream ended inside a streamed functionCall at byte {len}",
		},
		{
			Name:   "error chunk after HTTP 200",
			Events: []string{chunk(call("f", `{}`)), chunk(opener("g")), overload, chunk(call("h", `{}`)), stop},
			Calls: []synthCall{
				{Name: "f", Input: `{}`, Raw: `{}`, Complete: true, At: 0},
				{Name: "g", Raw: `{}`, At: 2, ErrHas: "(error chunk at bytes {1}-{2}: 503 UNAVAILABLE: The model is overloaded. Please try again later.)"},
			},
			EndErr: "error chunk at bytes {1}-{2}: 503 UNAVAILABLE: The model is overloaded. Please try again later.",
		},
		{
			Name:   "error chunk whose error is a string",
			Events: []string{chunk(text), `{"error":"quota exceeded"}`},
			EndErr: "error chunk at bytes {0}-{1}: quota exceeded",
		},
		{
			Name:   "raw JSON error body after the last event",
			Events: []string{chunk(call("f", `{}`)), "raw:" + `{"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}` + "\n"},
			Calls:  []synthCall{{Name: "f", Input: `{}`, Raw: `{}`, Complete: true, At: 0}},
			EndErr: "non-SSE data after the last event, at bytes {0}-{len}: 500 INTERNAL: Internal error encountered.",
		},
		{
			Name: "pretty-printed error array after a finished stream",
			Events: []string{chunk(call("f", `{}`)), stop,
				"raw:[{\r\n  \"error\": {\r\n    \"code\": 429,\r\n    \"message\": \"Resource exhausted.\",\r\n    \"status\": \"RESOURCE_EXHAUSTED\"\r\n  }\r\n}\r\n]"},
			Calls:  []synthCall{{Name: "f", Input: `{}`, Raw: `{}`, Complete: true, At: 0}},
			Stop:   "STOP",
			EndErr: "non-SSE data after the last event, at bytes {1}-{len}: 429 RESOURCE_EXHAUSTED: Resource exhausted.",
		},
		{
			Name:   "error body glued to the last event without a blank line",
			Events: []string{chunk(call("f", `{}`)), "data: " + stop + "\r\n" + `{"error":{"code":503,"status":"UNAVAILABLE","message":"Try later."}}`},
			Calls:  []synthCall{{Name: "f", Input: `{}`, Raw: `{}`, Complete: true, At: 0}},
			Stop:   "STOP",
			EndErr: "non-SSE data after the last event, at bytes ",
		},
		{
			Name:   "text that is not JSON after the last event",
			Events: []string{stop, "raw:upstream request timeout"},
			Stop:   "STOP",
			EndErr: `non-SSE data after the last event, at bytes {0}-{len}: "upstream request timeout"`,
		},
		{
			Name:   "comments and blank lines after the last event are no tail",
			Events: []string{stop, ": keepalive\n\n", "raw:\r\n\n: bye\n"},
			Stop:   "STOP",
		},
		{
			Name:   "chunks without content",
			Events: []string{`{"candidates":[{"index":0}]}`, `{"usageMetadata":{"promptTokenCount":1}}`, chunk(call("f", `{}`)), `{"candidates":[{"finishReason":"STOP"}]}`},
			Calls:  []synthCall{{Name: "f", Input: `{}`, Raw: `{}`, Complete: true, At: 2}},
			Stop:   "STOP",
		},
		{
			Name:   "bad chunk data stops parsing",
			Events: []string{chunk(call("f", `{}`)), `{"candidates":[`, chunk(call("g", `{}`)), stop},
			Calls:  []synthCall{{Name: "f", Input: `{}`, Raw: `{}`, Complete: true, At: 0}},
			EndErr: "bad chunk data at bytes {0}-{1}: unexpected end of JSON input",
		},
		{
			Name:   "a field of the wrong type is bad chunk data",
			Events: []string{chunk(`{"functionCall":{"name":7}}`), stop},
			EndErr: "bad chunk data at bytes 0-{0}: json: cannot unmarshal number",
		},
		{
			Name:   "a new call while a streamed one is open",
			Events: []string{chunk(opener("f")), partial(true, pstr("$.a", "x", false)), chunk(call("g", `{}`)), stop},
			Calls: []synthCall{
				{Name: "f", Raw: `{"a":"x"}`, At: 2, ErrHas: "a new functionCall began at bytes {1}-{2} before its last part"},
				{Name: "g", Input: `{}`, Raw: `{}`, Complete: true, At: 2},
			},
			Stop: "STOP",
		},
		{
			Name:   "partialArgs with no call open",
			Events: []string{partial(false, pstr("$.a", "x", false)), stop},
			Calls:  []synthCall{{Raw: `{"a":"x"}`, At: 0, ErrHas: "tool call has no name"}},
			Stop:   "STOP",
		},
		{
			Name:   "stray closing and keep-open parts are ignored",
			Events: []string{chunk(closer), chunk(keepOpen), chunk(`{"functionCall":{"args":null}}`), stop},
			Stop:   "STOP",
		},
		{
			Name: "only candidate 0 is read",
			Events: []string{`{"candidates":[{"content":{"parts":[` + call("alt", `{}`) + `]},"index":1},{"content":{"parts":[` + call("g", `{}`) + `]},"index":0}]}`,
				`{"candidates":[{"finishReason":"MAX_TOKENS","index":1},{"finishReason":"STOP"}]}`},
			Calls: []synthCall{{Name: "g", Input: `{}`, Raw: `{}`, Complete: true, At: 0}},
			Stop:  "STOP",
		},
		{
			Name:   "a jsonPath that names no single place",
			Events: []string{chunk(opener("f")), partial(true, pstr("$.a[*]", "x", false)), chunk(closer), stop},
			Calls:  []synthCall{{Name: "f", Raw: `{}`, At: 2, ErrHas: `tool call partialArgs: jsonPath "$.a[*]" has a selector starting with '*'`}},
			Stop:   "STOP",
		},
		{
			Name:   "paths that conflict",
			Events: []string{chunk(opener("f")), partial(true, pstr("$.a", "x", false)), partial(true, pstr("$.a.b", "y", false)), chunk(closer), stop},
			Calls:  []synthCall{{Name: "f", Raw: `{"a":"x"}`, At: 3, ErrHas: `jsonPath "$.a.b" sets a path through a string`}},
			Stop:   "STOP",
		},
		{
			Name:   "an array element never set",
			Events: []string{chunk(opener("f")), partial(true, pstr("$.a[1]", "x", false)), chunk(closer), stop},
			Calls:  []synthCall{{Name: "f", Raw: `{"a":[null,"x"]}`, At: 2, ErrHas: "tool call partialArgs left an array element unset"}},
			Stop:   "STOP",
		},
		{
			Name:   "a number with no JSON form",
			Events: []string{chunk(opener("f")), partial(false, pval("$.a", "numberValue", `"NaN"`)), stop},
			Calls:  []synthCall{{Name: "f", Raw: `{}`, At: 1, ErrHas: `numberValue "NaN" has no JSON form`}},
			Stop:   "STOP",
		},
		{
			Name: "an opener with args and an id seeds the streamed call",
			Events: []string{chunk(`{"functionCall":{"id":"fc_9","name":"f","args":{"k":1,"s":"old"},"willContinue":true}}`),
				partial(true, pstr("$.s", "new", false)), chunk(closer), stop},
			Calls: []synthCall{{ID: "fc_9", Name: "f", Input: `{"k":1,"s":"new"}`, Raw: `{"k":1,"s":"new"}`, Complete: true, At: 2}},
			Stop:  "STOP",
		},
		{
			Name:   "a blocked prompt",
			Events: []string{`{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":3}}`},
			Stop:   "SAFETY",
		},
		{
			Name:   "[DONE], blank data and comments are ignored",
			Events: []string{": hello\n\n", chunk(call("f", `{}`)), "data: [DONE]\n\n", "data:\n\n", stop},
			Calls:  []synthCall{{Name: "f", Input: `{}`, Raw: `{}`, Complete: true, At: 1}},
			Stop:   "STOP",
		},
		{
			Name:   "CRLF, lone CR and data without a space",
			Events: []string{"data:" + chunk(call("f", `{"a":"b"}`)) + "\r\n\r\n", "data:" + chunk(call("g", `{}`)) + "\r\r", "data:" + stop + "\r\n"},
			Calls: []synthCall{
				{Name: "f", Input: `{"a":"b"}`, Raw: `{"a":"b"}`, Complete: true, At: 0},
				{Name: "g", Input: `{}`, Raw: `{}`, Complete: true, At: 1},
			},
			Stop: "STOP",
		},
		{
			// The SSE reader drops a byte order mark only at the start: later,
			// the line it begins is not SSE, and so a tail.
			Name:   "a byte order mark is allowed only at the start",
			Events: []string{"raw:\xEF\xBB\xBFdata: " + chunk(call("f", `{}`)) + "\n\n", "raw:\xEF\xBB\xBFdata: " + stop + "\n\n"},
			Calls:  []synthCall{{Name: "f", Input: `{}`, Raw: `{}`, Complete: true, At: 0}},
			EndErr: "non-SSE data after the last event, at bytes {0}-{len}",
		},
		{
			Name: "a continuation part with args merges them",
			Events: []string{chunk(opener("f")), partial(true, pstr("$.a", "x", false)),
				chunk(`{"functionCall":{"args":{"b":[true]},"willContinue":true}}`), chunk(`{"functionCall":{"args":{"a":"y"}}}`), stop},
			Calls: []synthCall{{Name: "f", Input: `{"a":"y","b":[true]}`, Raw: `{"a":"y","b":[true]}`, Complete: true, At: 3}},
			Stop:  "STOP",
		},
		{
			Name:   "an error event",
			Events: []string{chunk(text), "event: error\ndata: upstream failure\n\n"},
			EndErr: `error event at bytes {0}-{1}: "upstream failure"`,
		},
		{
			Name:   "empty input",
			EndErr: "stream ended before a finishReason at byte 0",
		},
	}
	streamtest.RunCases(t, parse, frame, tests, streamtest.CaseOpts{SynthID: synthID})
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
	data, _ := frame([]string{chunk(call("f", `{}`)), chunk(opener("g")), partial(true, pstr("$.a", "x", true))})
	res, want := streamtest.CheckReadError(t, New(), data, contract)
	if len(res.Calls) != 2 || !res.Calls[0].Complete || res.Calls[1].Complete || !strings.Contains(res.Calls[1].Err, want) {
		t.Errorf("calls = %+v, want f complete and g incomplete citing the read error", res.Calls)
	}
}

// synthID checks the synthesized ID of call i.
func synthID(i int, id string) bool { return strings.HasPrefix(id, fmt.Sprintf("call_gemini_%d_", i)) }
