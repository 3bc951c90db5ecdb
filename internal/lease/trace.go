package lease

import "context"

// Trace is a set of hooks into the updates made under a context, in the
// manner of net/http/httptrace: a stage sets one on the context its
// handlers run under, so that the store, shared by several stages, can
// say whose write met a conflict. Nil fields are skipped; hooks must be
// quick and must not block.
type Trace struct {
	// Conflict is called when another writer's write refused a
	// compare-and-set that an update under the context led (its batch
	// then tries again).
	Conflict func()
}

type traceKey struct{}

// WithTrace returns ctx carrying t for the updates made under it.
func WithTrace(ctx context.Context, t *Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// traceOf is the Trace ctx carries, nil when none.
func traceOf(ctx context.Context) *Trace {
	t, _ := ctx.Value(traceKey{}).(*Trace)
	return t
}

// conflicted tells ctx's trace of a conflict.
func conflicted(ctx context.Context) {
	if t := traceOf(ctx); t != nil && t.Conflict != nil {
		t.Conflict()
	}
}
