package schemas

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// hostile is an event over one limit and the limit its error must name.
type hostile struct {
	name, typ, seq, body, limit string
}

func hostiles() []hostile {
	long := func(n int) string { return strings.Repeat("x", n) }
	return []hostile{
		{"huge seq", TypeToolUse, "", `{"seq":1000000000,"tool_use_id":"t","name":"Noop","input":{},"complete":true}`, LimitCalls},
		{"seq at the limit", TypeToolUse, "", `{"seq":512,"tool_use_id":"t","name":"Noop","input":{},"complete":true}`, LimitCalls},
		{"huge ce-seq", TypeToolUse, "1000000000", `{"seq":0,"tool_use_id":"t","name":"Noop","input":{},"complete":true}`, LimitCalls},
		{"huge calls", TypeTurnEnd, "", `{"calls":1000000000}`, LimitCalls},
		{"huge max_concurrency", TypeToolUse, "", `{"seq":0,"tool_use_id":"t","name":"Noop","input":{},"complete":true,"max_concurrency":99999999}`, LimitCalls},
		{"huge results", TypeTurnDone, "", `{"results":1000000000}`, LimitCalls},
		{"huge count on a call", TypeToolUse, "", `{"seq":0,"tool_use_id":"t","name":"Noop","input":{},"complete":true,"calls":1000000000}`, LimitCalls},
		{"huge count on a dispatch", TypeDispatch, "", `{"seq":0,"tool_use_id":"t","tool":"Noop","input":{},"pool":"p","calls":1000000000}`, LimitCalls},
		{"huge count on a result", TypeToolResult, "", `{"seq":0,"tool_use_id":"t","turn_calls":1000000000}`, LimitCalls},
		{"input over the limit", TypeToolUse, "", `{"seq":0,"tool_use_id":"t","name":"Noop","input":{"x":"` + long(DefaultMaxInputBytes) + `"},"complete":true}`, LimitInput},
		{"raw input over the limit", TypeToolUse, "", `{"seq":0,"tool_use_id":"t","name":"Noop","raw_input":"` + long(DefaultMaxInputBytes+1) + `","complete":false}`, LimitInput},
		{"long id", TypeToolUse, "", `{"seq":0,"tool_use_id":"` + long(10000) + `","name":"Noop","input":{},"complete":true}`, LimitID},
		{"long name", TypeToolUse, "", `{"seq":0,"tool_use_id":"t","name":"` + long(DefaultMaxNameBytes+1) + `","input":{},"complete":true}`, LimitName},
		{"long error", TypeToolUse, "", `{"seq":0,"tool_use_id":"t","error":"` + long(DefaultMaxTextBytes+1) + `","complete":false}`, LimitText},
		{"long reason", TypeTurnCancel, "", `{"reason":"` + long(DefaultMaxTextBytes+1) + `"}`, LimitText},
		{"long content", TypeToolResult, "", `{"seq":0,"tool_use_id":"t","content":"` + long(DefaultMaxContentBytes+1) + `"}`, LimitContent},
		{"dispatch pool", TypeDispatch, "", `{"seq":0,"tool_use_id":"t","tool":"Noop","input":{},"pool":"` + long(300) + `"}`, LimitName},
	}
}

// TestDecodeRefusesOverLimits: every number and size off the wire is
// bounded at decode time, and the error names the field and the limit.
func TestDecodeRefusesOverLimits(t *testing.T) {
	for _, h := range hostiles() {
		hdr := headers(h.typ, ContentJSON)
		if h.seq != "" {
			hdr[hdrSeq] = []string{h.seq}
		}
		_, _, err := Decode(hdr, []byte(h.body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Limit != h.limit {
			t.Errorf("%s: err = %v, want a *FieldError over %s", h.name, err, h.limit)
			continue
		}
		if !strings.Contains(err.Error(), "limits."+h.limit) {
			t.Errorf("%s: the message does not name the limit: %v", h.name, err)
		}
	}
}

// TestDecodeAtLimitsAccepted: the limits are inclusive where they count
// and exclusive for a position.
func TestDecodeAtLimitsAccepted(t *testing.T) {
	hdr := headers(TypeToolUse, ContentJSON)
	body := `{"seq":511,"tool_use_id":"` + strings.Repeat("i", DefaultMaxIDBytes) + `","name":"Noop","input":{},"complete":true,"max_concurrency":512}`
	if _, _, err := Decode(hdr, []byte(body)); err != nil {
		t.Errorf("at the limits: %v", err)
	}
	if _, _, err := Decode(headers(TypeTurnEnd, ContentJSON), []byte(`{"calls":512}`)); err != nil {
		t.Errorf("512 calls: %v", err)
	}
}

// TestDecodeConfiguredLimits: a configured limit replaces the default.
func TestDecodeConfiguredLimits(t *testing.T) {
	l := Limits{MaxCallsPerTurn: 4}
	_, _, err := l.Decode(headers(TypeToolUse, ContentJSON), []byte(`{"seq":4,"tool_use_id":"t","name":"Noop","input":{},"complete":true}`))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Limit != LimitCalls || !strings.Contains(err.Error(), "limit of 4") {
		t.Errorf("err = %v", err)
	}
	if _, _, err := l.Decode(headers(TypeToolUse, ContentJSON), []byte(`{"seq":3,"tool_use_id":"t","name":"Noop","input":{},"complete":true}`)); err != nil {
		t.Error(err)
	}
}

// TestDecodeOverLimitKeepsData: an event over a limit still comes back
// decoded, so the router can answer the call it names.
func TestDecodeOverLimitKeepsData(t *testing.T) {
	body := `{"seq":2,"tool_use_id":"t2","name":"Noop","input":{"x":"` + strings.Repeat("a", DefaultMaxInputBytes) + `"},"complete":true}`
	meta, data, err := Decode(headers(TypeToolUse, ContentJSON), []byte(body))
	u, ok := data.(*ToolUse)
	if err == nil || !ok || u.Seq != 2 || u.ToolUseID != "t2" || meta.Seq != -1 {
		t.Fatalf("err %v, data %T %+v, meta seq %d", err, data, u, meta.Seq)
	}
}

// TestDecodeMemoryBound states and checks what one event can cost: the
// allocations of decoding are a small multiple of the event's own size
// (the body is the bound: the server's max_payload caps it), never of a
// number inside it.
func TestDecodeMemoryBound(t *testing.T) {
	for _, h := range hostiles() {
		hdr := headers(h.typ, ContentJSON)
		if h.seq != "" {
			hdr[hdrSeq] = []string{h.seq}
		}
		body := []byte(h.body)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range 4 {
			_, _, _ = Decode(hdr, body)
		}
		runtime.ReadMemStats(&after)
		perEvent := (after.TotalAlloc - before.TotalAlloc) / 4
		if bound := uint64(4*len(body) + 64<<10); perEvent > bound {
			t.Errorf("%s: decoding one %d-byte event allocated %d bytes, over %d", h.name, len(body), perEvent, bound)
		}
	}
}

// TestLeaseSizeFollowsCalls: a lease holds an entry per call that exists;
// a call at the largest seq the limits allow costs one entry, not a slot
// for every seq below it.
func TestLeaseSizeFollowsCalls(t *testing.T) {
	l := NewLease(10, t0)
	l.Call(DefaultMaxCallsPerTurn - 1).State = CallRouted
	if len(l.Calls) != 1 {
		t.Fatalf("%d entries for one call", len(l.Calls))
	}
	b, err := EncodeLease(l)
	if err != nil {
		t.Fatal(err)
	}
	oneCall := len(b)
	if oneCall > 64 {
		t.Errorf("a lease with one call encodes to %d bytes", oneCall)
	}
	// Entries stay sorted whatever order calls arrive in.
	for _, seq := range []int{7, 3, 9, 0, 3} {
		l.Call(seq)
	}
	var got []int
	for _, c := range l.Calls {
		got = append(got, c.Seq)
	}
	if want := []int{0, 3, 7, 9, DefaultMaxCallsPerTurn - 1}; !equalInts(got, want) {
		t.Errorf("seqs %v, want %v", got, want)
	}
	if l.Peek(5) != nil || l.Peek(7) == nil || l.Seen() != DefaultMaxCallsPerTurn {
		t.Errorf("Peek(5) %v Peek(7) %v Seen %d", l.Peek(5), l.Peek(7), l.Seen())
	}
	// The worst case the limits allow: every call, each with a name of the
	// longest length (a rejected call keeps the name it was sent with).
	full := NewLease(10, t0)
	for seq := range DefaultMaxCallsPerTurn {
		c := full.Call(seq)
		c.State, c.Tool, c.Rejected = CallReady, strings.Repeat("n", DefaultMaxNameBytes), true
	}
	if b, _ = EncodeLease(full); len(b) > 160<<10 {
		t.Errorf("a full lease encodes to %d bytes", len(b))
	}
	t.Logf("lease with one call at seq %d: %d bytes; full lease (%d calls, %d-byte names): %d bytes", DefaultMaxCallsPerTurn-1, oneCall, DefaultMaxCallsPerTurn, DefaultMaxNameBytes, len(b))
	// A decoded lease out of seq order is refused, not trusted.
	bad := &Lease{Calls: []LeaseCall{{Seq: 3}, {Seq: 1}}}
	if _, err := DecodeLease(mustEncode(t, bad)); err == nil {
		t.Error("a lease with entries out of order decoded")
	}
}

func mustEncode(t *testing.T, l *Lease) []byte {
	t.Helper()
	b, err := EncodeLease(l)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDecodeDenseLease: a lease written before entries carried their seq
// (one slot per seq) still reads, each slot at its seq.
func TestDecodeDenseLease(t *testing.T) {
	type oldCall struct {
		State CallState `msgpack:"s"`
		Tool  string    `msgpack:"t,omitempty"`
	}
	type oldLease struct {
		Version uint64    `msgpack:"v"`
		Total   int       `msgpack:"n"`
		Calls   []oldCall `msgpack:"c"`
	}
	b, err := msgpack.Marshal(oldLease{Version: 3, Total: -1, Calls: []oldCall{{CallDone, "a"}, {}, {CallRunning, "c"}}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := DecodeLease(b)
	if err != nil {
		t.Fatal(err)
	}
	if c := l.Peek(2); c == nil || c.Tool != "c" || c.State != CallRunning || l.Peek(1).State != CallUnknown || l.Peek(0).Tool != "a" {
		t.Errorf("calls %+v", l.Calls)
	}
}

// TestCountLeavesPlaceForSeq: a count carried by a call, a dispatch or a
// result must be above the call's seq; 0 means no count.
func TestCountLeavesPlaceForSeq(t *testing.T) {
	for _, d := range []Data{
		&ToolUse{Seq: 3, ToolUseID: "t", Calls: 3},
		&Dispatch{Seq: 3, ToolUseID: "t", Tool: "Noop", Pool: "p", Input: RawJSON(`{}`), Calls: 2},
		&ToolResult{Seq: 3, ToolUseID: "t", TurnCalls: 1},
	} {
		var fe *FieldError
		if err := d.Validate(); !errors.As(err, &fe) || !strings.Contains(fe.Field, "calls") {
			t.Errorf("%T: %v, want a FieldError on its count", d, err)
		}
	}
	for _, d := range []Data{
		&ToolUse{Seq: 3, ToolUseID: "t", Calls: 4},
		&ToolUse{Seq: 3, ToolUseID: "t"},
		&ToolResult{Seq: 3, ToolUseID: "t", TurnCalls: 4},
	} {
		if err := d.Validate(); err != nil {
			t.Errorf("%T %+v: %v", d, d, err)
		}
	}
}

// TestCallsHeader: Encode puts a call's turn count in ce-calls, so that
// Decode still gives it when the data is unusable; a count over the limit
// is refused and kept cut to the limit, for closing the turn there.
func TestCallsHeader(t *testing.T) {
	h, body, err := Encode(Meta{Source: "/test", Seq: 1}, &ToolUse{Seq: 1, ToolUseID: "t", Calls: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Get(hdrCalls); got != "3" {
		t.Fatalf("ce-calls %q, want 3", got)
	}
	meta, _, err := Decode(h, body)
	if err != nil || meta.Calls != 3 {
		t.Fatalf("decoded calls %d: %v", meta.Calls, err)
	}
	meta, data, err := Decode(h, []byte("\xc1 garbage"))
	if err == nil || data != nil || meta.Calls != 3 || meta.Seq != 1 {
		t.Fatalf("garbage data: calls %d, seq %d, data %v, err %v", meta.Calls, meta.Seq, data, err)
	}
	h.Set(hdrCalls, "100000")
	meta, _, err = Decode(h, body)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Limit != LimitCalls || meta.Calls != DefaultMaxCallsPerTurn {
		t.Fatalf("over the limit: calls %d, err %v", meta.Calls, err)
	}
}
