package schemas

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
)

func TestTraceContextBounded(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct {
		name                  string
		parent, state         string
		wantParent, wantState string
	}{
		{"kept", tp, "a=1", tp, "a=1"},
		{"parent over its bound", tp + strings.Repeat("-x", MaxTraceParent), "a=1", "", ""},
		{"state over its bound", tp, strings.Repeat("a", MaxTraceState+1), tp, ""},
		{"bad percent-encoding", "%zz", "a=1", "", ""},
		{"not printable", "00-\x01", "", "", ""},
		{"not ASCII", "00-%C3%BC", "", "", ""},
		{"state without parent", "", "a=1", "", ""},
		{"state not printable", tp, "a=%0A", tp, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Meta{Source: "/test", Tenant: "t", Turn: "u", Seq: 0}
			h, body, err := Encode(m, &ToolUse{Seq: 0, ToolUseID: "c", Name: "echo", Input: RawJSON(`{}`), Complete: true})
			if err != nil {
				t.Fatal(err)
			}
			if tc.parent != "" {
				h[hdrTraceParent] = []string{tc.parent}
			}
			if tc.state != "" {
				h[hdrTraceState] = []string{tc.state}
			}
			got, _, err := Decode(h, body)
			if err != nil {
				t.Fatalf("Decode: %v (a bad trace context must not fail the event)", err)
			}
			if got.TraceParent != tc.wantParent || got.TraceState != tc.wantState {
				t.Errorf("trace = %q, %q; want %q, %q", got.TraceParent, got.TraceState, tc.wantParent, tc.wantState)
			}
			if p, s := TraceOf(nats.Header(h)); p != tc.wantParent || s != tc.wantState {
				t.Errorf("TraceOf = %q, %q; want %q, %q", p, s, tc.wantParent, tc.wantState)
			}
		})
	}
}

func TestEncodeDropsOverlongTrace(t *testing.T) {
	m := Meta{Source: "/test", Tenant: "t", Turn: "u", Seq: -1, TraceParent: strings.Repeat("0", MaxTraceParent+1), TraceState: "a=1"}
	h, _, err := Encode(m, &TurnEnd{Calls: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := h[hdrTraceParent]; ok {
		t.Errorf("ce-traceparent over its bound was sent: %q", h[hdrTraceParent])
	}
	if _, ok := h[hdrTraceState]; ok {
		t.Errorf("ce-tracestate without its traceparent was sent")
	}
}
