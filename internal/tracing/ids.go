package tracing

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"
)

// turnKey marks a context whose root span belongs to a turn's trace.
type turnKey struct{}

type turnRef struct{ tenant, turn string }

// TurnIDs makes the ids of spans (it is an sdktrace.IDGenerator; give it
// to the provider with sdktrace.WithIDGenerator). A root span that StartHop
// starts for an event without a trace context gets its turn's trace id
// (TurnTraceID), so the calls of a turn whose producer sent no trace
// context still share one trace; every other id is random. Without it,
// tracing works the same, but each such call is a trace of its own.
type TurnIDs struct{}

// NewIDs returns the trace id and span id of a root span.
func (TurnIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if r, ok := ctx.Value(turnKey{}).(turnRef); ok {
		return TurnTraceID(r.tenant, r.turn), newSpanID()
	}
	var tid trace.TraceID
	for !tid.IsValid() {
		binary.NativeEndian.PutUint64(tid[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(tid[8:], rand.Uint64())
	}
	return tid, newSpanID()
}

// NewSpanID returns the span id of a span in the trace traceID.
func (TurnIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return newSpanID() }

// TurnTraceID is the trace id of a turn whose producer sent no trace
// context: the first 16 bytes of SHA-256 over tenant, NUL, turn.
func TurnTraceID(tenant, turn string) trace.TraceID {
	sum := sha256.Sum256([]byte(tenant + "\x00" + turn))
	var tid trace.TraceID
	copy(tid[:], sum[:16])
	if !tid.IsValid() {
		tid[15] = 1
	}
	return tid
}

func newSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.NativeEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}
