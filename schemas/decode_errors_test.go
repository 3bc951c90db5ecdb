package schemas

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/vmihailenco/msgpack/v5"
)

// wantField decodes and requires a *FieldError naming field.
func wantField(t *testing.T, h nats.Header, body []byte, field string) {
	t.Helper()
	_, d, err := Decode(h, body)
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("Decode = %+v, %v; want a *FieldError for %s", d, err, field)
	}
	if fe.Field != field {
		t.Fatalf("Decode error names %q, want %q: %v", fe.Field, field, err)
	}
}

func mustMsgpack(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeErrorsNameTheField(t *testing.T) {
	validUse := map[string]any{"seq": 0, "tool_use_id": "t", "name": "Bash", "input": `{}`, "complete": true}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for k, v := range validUse {
			m[k] = v
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	okBody := mustMsgpack(t, validUse)
	hdr := func(mutate func(nats.Header)) nats.Header {
		h := headers(TypeToolUse, ContentMsgpack)
		mutate(h)
		return h
	}
	set := func(k, v string) func(nats.Header) { return func(h nats.Header) { h[k] = []string{v} } }
	del := func(k string) func(nats.Header) { return func(h nats.Header) { delete(h, k) } }
	mp := headers(TypeToolUse, ContentMsgpack)
	js := headers(TypeToolUse, ContentJSON)
	deep := append(bytes.Repeat([]byte{0x91}, maxDepth+1), 0x00)

	for _, tc := range []struct {
		name  string
		h     nats.Header
		body  []byte
		field string
	}{
		// Headers.
		{"missing ce-specversion", hdr(del(hdrSpecVersion)), okBody, hdrSpecVersion},
		{"wrong ce-specversion", hdr(set(hdrSpecVersion, "0.3")), okBody, hdrSpecVersion},
		{"missing ce-id", hdr(del(hdrID)), okBody, hdrID},
		{"missing ce-type", hdr(del(hdrType)), okBody, hdrType},
		{"unknown ce-type", hdr(set(hdrType, "dev.toolwire.tool_use.v9")), okBody, hdrType},
		{"missing ce-source", hdr(del(hdrSource)), okBody, hdrSource},
		{"bad ce-time", hdr(set(hdrTime, "yesterday")), okBody, hdrTime},
		{"bad ce-seq", hdr(set(hdrSeq, "three")), okBody, hdrSeq},
		{"negative ce-seq", hdr(set(hdrSeq, "-1")), okBody, hdrSeq},
		{"bad ce-calls", hdr(set(hdrCalls, "two")), okBody, hdrCalls},
		{"zero ce-calls", hdr(set(hdrCalls, "0")), okBody, hdrCalls},
		{"ce-calls not the data's", hdr(set(hdrCalls, "2")), okBody, hdrCalls},
		{"ce-calls leaving no place for ce-seq", hdr(func(h nats.Header) { set(hdrSeq, "3")(h); set(hdrCalls, "2")(h) }), okBody, hdrCalls},
		{"bad percent escape", hdr(set(hdrSubject, "turn%2")), okBody, hdrSubject},
		{"bad percent hex", hdr(set(hdrTenant, "acme%zz")), okBody, hdrTenant},
		{"percent escape not UTF-8", hdr(set(hdrTurn, "turn-%FF")), okBody, hdrTurn},
		{"unsupported content type", hdr(set(hdrContentType, "text/plain")), okBody, hdrContentType},
		{"malformed content type", hdr(set(hdrContentType, "application/json;;")), okBody, hdrContentType},

		// msgpack data.
		{"missing seq", mp, mustMsgpack(t, with("seq", nil)), "seq"},
		{"seq a string", mp, mustMsgpack(t, with("seq", "0")), "seq"},
		{"seq negative", mp, mustMsgpack(t, with("seq", -2)), "seq"},
		{"complete without name", mp, mustMsgpack(t, with("name", nil)), "name"},
		{"complete with empty name", mp, mustMsgpack(t, with("name", "")), "name"},
		{"complete without input", mp, mustMsgpack(t, with("input", nil)), "input"},
		{"input not JSON text", mp, mustMsgpack(t, with("input", "{nope")), "input"},
		{"negative max_concurrency", mp, mustMsgpack(t, with("max_concurrency", -1)), "max_concurrency"},
		{"negative calls", mp, mustMsgpack(t, with("calls", -1)), "calls"},
		{"garbage", mp, []byte("\xc1 not msgpack"), "data"},
		{"empty body", mp, nil, "data"},
		{"not a map", mp, mustMsgpack(t, []any{0, "t", "Bash"}), "data"},
		{"nil", mp, []byte{0xc0}, "data"},
		{"trailing bytes", mp, append(okBody[:len(okBody):len(okBody)], 0x00), "data"},
		// An array claiming 2^32-1 elements, inside input: the decoder
		// would allocate 64 GiB for it.
		{"huge declared length", mp, []byte("\x84\xa3seq\x00\xabtool_use_id\xa1t\xa8complete\xc3\xa5input\xdd\xff\xff\xff\xff"), "data"},
		{"nested too deep", mp, append([]byte("\x82\xa3seq\x00\xa5input"), deep...), "data"},

		// JSON data.
		{"json missing seq", js, []byte(`{"tool_use_id":"t"}`), "seq"},
		{"json seq a string", js, []byte(`{"seq":"0","tool_use_id":"t"}`), "seq"},
		{"json seq a fraction", js, []byte(`{"seq":1.0,"tool_use_id":"t"}`), "seq"},
		{"json tool_use_id a number", js, []byte(`{"seq":0,"tool_use_id":7}`), "tool_use_id"},
		{"json complete without name", js, []byte(`{"seq":0,"tool_use_id":"t","complete":true,"input":{}}`), "name"},
		{"json garbage", js, []byte(`{"seq":0,`), "data"},
		{"json null", js, []byte(`null`), "data"},
		{"json array", js, []byte(`[0,"t"]`), "data"},
		{"json trailing data", js, []byte(`{"seq":0,"tool_use_id":"t"} {}`), "data"},
		{"json nested too deep", js, []byte(`{"seq":0,"tool_use_id":"t","input":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`), "data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			wantField(t, tc.h, tc.body, tc.field)
			if d := time.Since(start); d > time.Second {
				t.Errorf("rejecting took %v", d)
			}
		})
	}
}

// encoding/json names the field only for plain type mismatches; a value
// whose own decoder fails (a time) must be blamed on its field too.
func TestDecodeBlamesTimeField(t *testing.T) {
	h := headers(TypeToolResult, ContentJSON)
	wantField(t, h, []byte(`{"seq":0,"tool_use_id":"t","finished_at":"yesterday"}`), "finished_at")
	wantField(t, h, []byte(`{"seq":0,"tool_use_id":"t","started_at":"2025-05-01t12:00:00z"}`), "started_at")
	body := mustMsgpack(t, map[string]any{"seq": 0, "tool_use_id": "t", "started_at": "yesterday"})
	wantField(t, headers(TypeToolResult, ContentMsgpack), body, "started_at")
}

// The sentinels of newData tell a missing count from a zero one; a msgpack
// nil or empty array used to zero them and pass.
func TestDecodeMissingCount(t *testing.T) {
	for _, body := range [][]byte{{0x80}, {0xc0}, {0x90}, mustMsgpack(t, []any{5, "", ""})} {
		_, d, err := Decode(headers(TypeTurnEnd, ContentMsgpack), body)
		if err == nil {
			t.Errorf("body % x decoded as %+v", body, d)
		}
	}
	wantField(t, headers(TypeTurnEnd, ContentMsgpack), []byte{0x80}, "calls")
	wantField(t, headers(TypeTurnDone, ContentJSON), []byte(`{}`), "results")
}

// Producers may add fields (additionalProperties: true); consumers ignore them.
func TestDecodeIgnoresUnknownFields(t *testing.T) {
	body := mustMsgpack(t, map[string]any{"results": 2, "new_field": []any{map[string]any{"x": 1}}})
	if _, _, err := Decode(headers(TypeTurnDone, ContentMsgpack), body); err != nil {
		t.Errorf("msgpack: %v", err)
	}
	if _, _, err := Decode(headers(TypeTurnDone, ContentJSON), []byte(`{"results":2,"new_field":[{"x":1}]}`)); err != nil {
		t.Errorf("JSON: %v", err)
	}
}
