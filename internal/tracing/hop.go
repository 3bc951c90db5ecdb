package tracing

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Attributes of toolwire's spans, besides the semantic conventions'.
const (
	AttrStage     = attribute.Key("toolwire.stage")
	AttrTenant    = attribute.Key("toolwire.tenant")
	AttrTurn      = attribute.Key("toolwire.turn")
	AttrSeq       = attribute.Key("toolwire.seq")
	AttrDelivered = attribute.Key("toolwire.delivery")
	AttrAttempt   = attribute.Key("toolwire.attempt")
	AttrOutcome   = attribute.Key("toolwire.outcome")
	attrErrorType = attribute.Key("error.type")
)

// Hop is one message a stage handles.
type Hop struct {
	Stage, Subject string
	// Type is the event's ce-type ("" when it did not decode).
	Type         string
	Tenant, Turn string
	// Seq is the call's seq, -1 for turn-level events.
	Seq       int
	Delivered int
	// Parent and State are the trace context the event carried.
	Parent, State string
	// Start is when the message was received.
	Start time.Time
}

// StartHop starts the span of a stage handling one message: a child of the
// span the event names, or, when it names none, a root in its turn's
// trace (TurnIDs). Nil t: ctx and the zero Span.
func (t *Tracer) StartHop(ctx context.Context, h Hop) (context.Context, Span) {
	if t == nil {
		return ctx, Span{}
	}
	ctx = Extract(ctx, h.Parent, h.State)
	if !trace.SpanContextFromContext(ctx).IsValid() && h.Turn != "" {
		ctx = context.WithValue(ctx, turnKey{}, turnRef{h.Tenant, h.Turn})
	}
	attrs := []attribute.KeyValue{
		attribute.String("messaging.system", "nats"),
		attribute.String("messaging.operation.type", "process"),
		attribute.String("messaging.destination.name", h.Subject),
		AttrStage.String(h.Stage),
		AttrTenant.String(h.Tenant),
		AttrTurn.String(h.Turn),
		AttrDelivered.Int(h.Delivered),
	}
	if h.Seq >= 0 {
		attrs = append(attrs, AttrSeq.Int(h.Seq))
	}
	ctx, s := t.t.Start(ctx, h.Stage+" "+eventName(h.Type),
		trace.WithSpanKind(trace.SpanKindConsumer), trace.WithTimestamp(h.Start), trace.WithAttributes(attrs...))
	return ctx, Span{s}
}

// eventName is the short name of a ce-type, dev.toolwire.tool_use.v1 →
// tool_use: low-cardinality, for span names.
func eventName(typ string) string {
	rest, ok := strings.CutPrefix(typ, "dev.toolwire.")
	if !ok {
		return "message"
	}
	if i := strings.LastIndexByte(rest, '.'); i > 0 {
		rest = rest[:i]
	}
	return rest
}

// Settled records what became of a hop's message (acked, retried,
// dead_lettered, left); a message given up on is the span's error, of
// class errType.
func (s Span) Settled(outcome string, gaveUp bool, errType string) {
	if s.s == nil {
		return
	}
	s.s.SetAttributes(AttrOutcome.String(outcome))
	if gaveUp {
		s.s.SetAttributes(attrErrorType.String(errType))
		s.s.SetStatus(codes.Error, outcome)
	}
}
