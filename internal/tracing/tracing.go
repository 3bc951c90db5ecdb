// Package tracing gives the pipeline's work OpenTelemetry spans: a span per
// message a stage handles (a hop) and a GenAI execute_tool span per call
// the executor runs, their context carried from stage to stage in the
// events' CloudEvents traceparent and tracestate extensions
// (schemas.Meta).
//
// Tracing is off unless a TracerProvider is given: a nil *Tracer and the
// zero Span do nothing and allocate nothing, so the stages cost what they
// did without it, and a trace context that came with an event is passed
// on unchanged.
//
// One trace per turn: a call whose tool_use carries a producer's trace
// context is part of that trace, its router hop a child of the producer's
// span. A call without one is put in a trace of its own turn, whose id is
// derived from the tenant and the turn (TurnIDs), so every call of the
// turn — and its end — lands in one trace, each call's router hop a root
// of it.
package tracing

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope names the instrumentation in the spans it makes.
const Scope = "github.com/toolwire/toolwire"

// Tracer makes the pipeline's spans; nil is off.
type Tracer struct {
	t trace.Tracer
}

// New is a Tracer over tp, or nil (off) when tp is nil or a no-op
// provider: then no span is made at all.
func New(tp trace.TracerProvider) *Tracer {
	switch tp.(type) {
	case nil, noop.TracerProvider, *noop.TracerProvider:
		return nil
	}
	return &Tracer{t: tp.Tracer(Scope)}
}

// Span is one span of the pipeline; the zero Span does nothing.
type Span struct {
	s trace.Span
}

// End ends the span.
func (s Span) End() {
	if s.s != nil {
		s.s.End()
	}
}

// Trace is the span's W3C traceparent and tracestate, what an event that
// continues from the span carries; "" for the zero Span.
func (s Span) Trace() (parent, state string) {
	if s.s == nil {
		return "", ""
	}
	return Inject(trace.ContextWithSpanContext(context.Background(), s.s.SpanContext()))
}
