package router

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// answer is the router's stage.Answerer: what an input event the router
// gives up on still names gets its answer, so that the turn completes. A
// call whose seq is known (from the data or the ce-seq header, under the
// limit) gets an error result in its place; a turn_end closes its turn at
// the calls seen. When the lease cannot be used (its bucket is gone, the
// turn's name is no key), the answer goes to the result stream directly,
// on the event's last delivery (answerUnleased).
func (r *Router) answer(ctx context.Context, m *stage.Msg, cause error) error {
	p := m.Subject
	switch p.Kind {
	case subjects.KindEnd, subjects.KindUse:
	default:
		return nil
	}
	if p.Kind == subjects.KindEnd {
		err := r.closeAt(ctx, p, "turn_end not usable, the turn is closed at the calls seen: "+cause.Error())
		if err == nil {
			return nil
		}
		if e, ok := m.Data.(*schemas.TurnEnd); ok && e.Calls <= r.cfg.Limits.MaxCallsPerTurn {
			return r.publishEnd(ctx, p, &schemas.TurnEnd{Calls: e.Calls, StopReason: "error", Error: cause.Error()})
		}
		return err
	}
	use := r.limits.identify(m.Meta, m.Data)
	if use == nil {
		return r.closeCounted(ctx, p, m.Meta.Calls)
	}
	why := texts.NotExecuted(cause.Error())
	var fe *schemas.FieldError
	var bad *stage.MalformedError
	switch {
	case errors.As(cause, &fe) && fe.Limit != "":
		why = texts.OverLimit(cause.Error())
	case errors.As(cause, &bad):
		why = texts.MalformedUse(cause.Error())
	}
	// A corrupt copy of a call that is already routed (a good copy came
	// first) must not replace it.
	l, _, err := r.store.Get(ctx, p.Tenant, p.Turn)
	switch {
	case err == nil:
		if c := l.Peek(use.Seq); c != nil && c.State != schemas.CallUnknown {
			return nil
		}
	case !errors.Is(err, jetstream.ErrKeyNotFound):
		return r.answerUnleased(ctx, m, p, use, why, use.Calls, err)
	}
	var late *lateError
	err = r.reject(ctx, p, use, rejection{why: why})
	switch {
	case errors.As(err, &late):
		r.late.Add(1)
		return nil
	case err != nil:
		total := use.Calls
		if l != nil && l.Total >= 0 {
			total = l.Total
		}
		return r.answerUnleased(ctx, m, p, use, why, total, err)
	}
	return nil
}

// answerUnleased is the last resort for a call the lease cannot record
// (its bucket is gone, the write keeps failing): the answer goes to the
// result stream directly — on the event's last delivery only, unless the
// turn's name can never be a lease key. Before that the failure is
// retried: a result stored with no lease says the turn is over to a router
// that meets the turn next, and the turn's good calls would never run.
func (r *Router) answerUnleased(ctx context.Context, m *stage.Msg, p subjects.Parsed, use *schemas.ToolUse, why string, total int, cause error) error {
	if !m.Last && checkTurn(p) == nil {
		return cause
	}
	return r.publishResult(ctx, p, use, why, false, total)
}

// closeCounted makes sure a turn whose calls carry its count completes
// when one of its tool_use events names no call at all: such a turn has no
// turn_end, and its missing call may be its last, with no message left
// for reorder to wait on. The end marker is one (it fills what never came
// at the gap deadline), with the lease's count or, when the turn has none
// yet, the one the event's ce-calls header gives, recorded in the lease
// first. A turn with neither is left to its other events (a turn_end).
func (r *Router) closeCounted(ctx context.Context, p subjects.Parsed, calls int) error {
	if calls <= 0 {
		// No count to give: only a turn that has one is closed.
		l, _, err := r.store.Get(ctx, p.Tenant, p.Turn)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			return nil
		case err != nil:
			return err
		case l.Total < 0:
			return nil
		}
	}
	return r.closeWith(ctx, p, func(*schemas.Lease) int { return calls }, "a tool_use of the turn named no call")
}
