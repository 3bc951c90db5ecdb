package tracing

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/schemas"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// Off, tracing costs the stages nothing: no span, no allocation.
func TestOffCostsNothing(t *testing.T) {
	for _, tp := range []trace.TracerProvider{nil, noop.NewTracerProvider()} {
		if New(tp) != nil {
			t.Fatalf("New(%T) is on", tp)
		}
	}
	var tr *Tracer
	ctx := context.Background()
	h := Hop{Stage: "router", Subject: "tw.t.in.u.use", Tenant: "t", Turn: "u", Parent: parent, Start: time.Now()}
	allocs := testing.AllocsPerRun(100, func() {
		c, s := tr.StartHop(ctx, h)
		_, cs := tr.StartCall(c, Call{Tool: "Bash"})
		cs.Result("ok", "")
		s.Settled("acked", false, "")
		if p, _ := s.Trace(); p != "" {
			t.Fatal("the zero Span has a trace context")
		}
		s.End()
	})
	if allocs != 0 {
		t.Errorf("off: %v allocations per message, want 0", allocs)
	}
}

func TestExtractIgnoresBadContexts(t *testing.T) {
	for _, tp := range []string{
		"",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		parent + "-extra",
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" + strings.Repeat("-ab", schemas.MaxTraceParent),
		"\x00\xff",
	} {
		if sc := trace.SpanContextFromContext(Extract(context.Background(), tp, "a=b")); sc.IsValid() {
			t.Errorf("Extract(%q) = %v, want nothing", tp, sc)
		}
	}
}

func TestExtractInjectRoundTrip(t *testing.T) {
	ctx := Extract(context.Background(), parent, "congo=t61rcWkgMzE")
	p, s := Inject(ctx)
	if p != parent || s != "congo=t61rcWkgMzE" {
		t.Errorf("Inject = %q, %q", p, s)
	}
	// A tracestate over its bound is dropped, the traceparent kept.
	p, s = Inject(Extract(context.Background(), parent, strings.Repeat("a", schemas.MaxTraceState+1)))
	if p != parent || s != "" {
		t.Errorf("over-long tracestate: Inject = %q, %q", p, s)
	}
	var m schemas.Meta
	Carry(context.Background(), &m)
	if m.TraceParent != "" {
		t.Errorf("Carry without a span set %q", m.TraceParent)
	}
	Carry(ctx, &m)
	if m.TraceParent != parent {
		t.Errorf("Carry set %q", m.TraceParent)
	}
}

func TestHopParentsAndTurnTraces(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithIDGenerator(TurnIDs{}))
	tr := New(tp)
	ctx := context.Background()

	_, child := tr.StartHop(ctx, Hop{Stage: "router", Type: "dev.toolwire.tool_use.v1", Tenant: "t", Turn: "u", Seq: 0, Parent: parent})
	child.End()
	_, a := tr.StartHop(ctx, Hop{Stage: "router", Type: "dev.toolwire.tool_use.v1", Tenant: "t", Turn: "u", Seq: 1})
	a.End()
	_, b := tr.StartHop(ctx, Hop{Stage: "router", Type: "dev.toolwire.turn_end.v1", Tenant: "t", Turn: "u", Seq: -1, Parent: "garbage"})
	b.End()
	_, other := tr.StartHop(ctx, Hop{Stage: "router", Tenant: "t", Turn: "v", Seq: 0})
	other.End()

	spans := rec.Ended()
	if len(spans) != 4 {
		t.Fatalf("%d spans", len(spans))
	}
	want := Extract(ctx, parent, "")
	if got := spans[0].Parent(); got.SpanID() != trace.SpanContextFromContext(want).SpanID() || !got.IsRemote() {
		t.Errorf("the producer's child has parent %v", got)
	}
	if spans[0].Name() != "router tool_use" || spans[2].Name() != "router turn_end" || spans[3].Name() != "router message" {
		t.Errorf("names %q %q %q", spans[0].Name(), spans[2].Name(), spans[3].Name())
	}
	turn := TurnTraceID("t", "u")
	for _, s := range spans[1:3] {
		if s.SpanContext().TraceID() != turn || s.Parent().IsValid() {
			t.Errorf("%s: trace %s parent %v, want a root in the turn's trace %s", s.Name(), s.SpanContext().TraceID(), s.Parent(), turn)
		}
	}
	if spans[3].SpanContext().TraceID() == turn || spans[3].SpanContext().TraceID() != TurnTraceID("t", "v") {
		t.Errorf("another turn's span is in trace %s", spans[3].SpanContext().TraceID())
	}
}
