package tracing

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// The GenAI semantic conventions' attributes of a tool's execution.
const (
	AttrOperation  = attribute.Key("gen_ai.operation.name")
	AttrToolName   = attribute.Key("gen_ai.tool.name")
	AttrToolCallID = attribute.Key("gen_ai.tool.call.id")
	// OperationExecuteTool is gen_ai.operation.name of a call's span.
	OperationExecuteTool = "execute_tool"
)

// Call is one call a worker runs.
type Call struct {
	Tool, ID     string
	Tenant, Turn string
	Seq, Attempt int
}

// StartCall starts the span of a tool running one call, `execute_tool
// <tool>` with the GenAI attributes: a child of the hop in ctx. Neither the
// call's arguments nor its output go in it. Nil t: ctx and the zero Span.
func (t *Tracer) StartCall(ctx context.Context, c Call) (context.Context, Span) {
	if t == nil {
		return ctx, Span{}
	}
	ctx, s := t.t.Start(ctx, OperationExecuteTool+" "+c.Tool, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		AttrOperation.String(OperationExecuteTool),
		AttrToolName.String(c.Tool),
		AttrToolCallID.String(c.ID),
		AttrTenant.String(c.Tenant),
		AttrTurn.String(c.Turn),
		AttrSeq.Int(c.Seq),
		AttrAttempt.Int(c.Attempt),
	))
	return ctx, Span{s}
}

// Result records how a call ended: outcome as the executor counts it (ok,
// error), and, for an error result, the span's error of class errType.
// The result's text stays out: it is the tool's output.
func (s Span) Result(outcome, errType string) {
	if s.s == nil {
		return
	}
	s.s.SetAttributes(AttrOutcome.String(outcome))
	if errType != "" {
		s.s.SetAttributes(attrErrorType.String(errType))
		s.s.SetStatus(codes.Error, "the call's result is an error")
	}
}
