package stage

import (
	"context"

	"github.com/toolwire/toolwire/internal/lease"
)

// OnStarted tells the Started hook of e, if there is one.
func (h Hooks) OnStarted(e CallEvent) {
	if h.Started != nil {
		h.Started(e)
	}
}

// OnParked tells the Parked hook of a call of tenant parking (+1) or
// leaving its wait (-1), if there is a hook.
func (h Hooks) OnParked(tenant string, delta int) {
	if h.Parked != nil {
		h.Parked(tenant, delta)
	}
}

// leaseTrace has the lease updates made under ctx tell the LeaseConflict
// hook of their conflicts, as stage's; ctx as it is when there is no hook.
func (h Hooks) leaseTrace(ctx context.Context, stage string) context.Context {
	if h.LeaseConflict == nil {
		return ctx
	}
	return lease.WithTrace(ctx, &lease.Trace{Conflict: func() { h.LeaseConflict(stage) }})
}
