package tracing

import (
	"context"

	"github.com/toolwire/toolwire/schemas"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// w3c reads and writes the W3C Trace Context; it validates what it reads
// (version, lengths, hex, non-zero ids) and ignores what does not pass.
var w3c propagation.TraceContext

// Extract is ctx carrying the remote span context of a W3C traceparent
// and tracestate, as an HTTP request or an event brings them; ctx itself
// when parent is empty or malformed. It needs no TracerProvider: a context
// extracted with tracing off is still passed on by Inject.
func Extract(ctx context.Context, parent, state string) context.Context {
	if parent == "" || len(parent) > schemas.MaxTraceParent {
		return ctx
	}
	if len(state) > schemas.MaxTraceState {
		state = ""
	}
	return w3c.Extract(ctx, &carrier{parent: parent, state: state})
}

// Inject is the W3C traceparent and tracestate of the span context in ctx,
// what an event published under ctx carries; "" when ctx has none.
func Inject(ctx context.Context) (parent, state string) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return "", ""
	}
	var c carrier
	w3c.Inject(ctx, &c)
	return c.parent, c.state
}

// Carry sets m's trace context to the one in ctx, when ctx has one: for a
// producer publishing under its caller's context.
func Carry(ctx context.Context, m *schemas.Meta) {
	if p, s := Inject(ctx); p != "" {
		m.TraceParent, m.TraceState = p, s
	}
}

// carrier holds the two fields of the W3C Trace Context without a map.
type carrier struct{ parent, state string }

func (c *carrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.parent
	case "tracestate":
		return c.state
	}
	return ""
}

func (c *carrier) Set(key, value string) {
	switch key {
	case "traceparent":
		c.parent = value
	case "tracestate":
		c.state = value
	}
}

func (c *carrier) Keys() []string { return []string{"traceparent", "tracestate"} }
