package router

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/answer"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// lateError is a tool_use that came after its turn's end. Its call must not
// run: it is answered (the result is stored on its result subject, marked
// late so that no delivery includes it) and its event dead-lettered with
// the reason.
type lateError struct{ reason string }

func (e *lateError) Error() string { return e.reason }

// pastEnd says why call seq is not part of its turn any more, or "".
func pastEnd(l *schemas.Lease, seq int) string {
	if l.Total >= 0 && seq >= l.Total {
		return texts.Late(seq, l.Total)
	}
	return ""
}

// errTurnOver is an opener's refusal: the turn has an end marker or
// results delivered but no lease, so its lease expired.
var errTurnOver = errors.New(texts.TurnOver)

// errUnended is errTurnOver for a turn whose lease expired before its end
// came (results delivered, no end marker): no call of it may run any more,
// but its turn_end must still reach reorder, or the turn never completes.
var errUnended = fmt.Errorf("%w before its end came", errTurnOver)

// opener makes the lease of a turn this router sees first — unless the
// turn is over: a late or replayed event must not bring an expired turn
// back to life, and a call of it run. The check costs one read, for the
// first event of a turn only.
type opener struct {
	r   *Router
	ctx context.Context
	p   subjects.Parsed
	max int
	// counted is the call's seq when it carries its turn's count
	// (ToolUse.Calls), else -1: such a turn has no end marker, and the
	// call's own result stands in for it (fresh).
	counted int
	// refused is why fresh made no lease: errTurnOver, or the read that
	// could not tell (then the event is retried: a lease made blind could
	// revive a turn).
	refused error
}

// opener returns the lease maker for an event of turn p; u is the call, nil
// for a turn-level event.
func (r *Router) opener(ctx context.Context, p subjects.Parsed, u *schemas.ToolUse) *opener {
	o := &opener{r: r, ctx: ctx, p: p, max: r.cfg.MaxConcurrency, counted: -1}
	if u != nil && u.MaxConcurrency > 0 {
		o.max = u.MaxConcurrency
	}
	if u != nil && u.Calls > 0 {
		o.counted = u.Seq
	}
	return o
}

// fresh is the lease.Store's fresh function. The end marker is published
// only after the lease exists (end, discard, closeAt), and it stays in the
// result stream until reorder has appended turn_done to the out subject;
// a result reaches the out subject only after its call was routed on the
// lease. So a marker or an out message without a lease means an expired
// turn — one of the two is there for the turn's whole life, reorder behind
// or not. The two reads go out together. The lease is read again after
// them because another router may have made it since the store's read.
//
// A turn whose calls carry its count has no end marker. For such a call
// its own result stands in: it is stored once the call is done, the lease
// lives until then, and it stays in the result stream until reorder has
// appended it to the out subject.
func (o *opener) fresh() *schemas.Lease {
	o.refused = nil
	var endErr error
	witness := o.r.cfg.Space.ResultEnd(o.p.Tenant, o.p.Turn)
	if o.counted >= 0 {
		witness = o.r.cfg.Space.Result(o.p.Tenant, o.p.Turn, o.counted)
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		_, endErr = o.r.results.GetLastMsgForSubject(o.ctx, witness)
	}()
	_, outErr := o.r.out.GetLastMsgForSubject(o.ctx, o.r.cfg.Space.Out(o.p.Tenant, o.p.Turn))
	<-read
	switch {
	case errors.Is(outErr, jetstream.ErrMsgNotFound) && errors.Is(endErr, jetstream.ErrMsgNotFound):
		return schemas.NewLease(o.max, time.Now())
	case outErr != nil && !errors.Is(outErr, jetstream.ErrMsgNotFound):
		o.refused = fmt.Errorf("router: read the turn's out subject: %w", outErr)
		return nil
	case endErr != nil && !errors.Is(endErr, jetstream.ErrMsgNotFound):
		o.refused = fmt.Errorf("router: read %s: %w", witness, endErr)
		return nil
	}
	_, _, err := o.r.store.Get(o.ctx, o.p.Tenant, o.p.Turn)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound) && endErr != nil && o.counted < 0:
		o.refused = errUnended
		return nil
	case errors.Is(err, jetstream.ErrKeyNotFound):
		o.refused = errTurnOver
		return nil
	case err != nil:
		o.refused = fmt.Errorf("router: read the turn's lease: %w", err)
		return nil
	}
	// It exists now: the create conflicts, and the update retries on what
	// the other router wrote.
	return schemas.NewLease(o.max, time.Now())
}

// err is the update's error as the opener explains it: a missing lease it
// refused to make is errTurnOver or the read that failed.
func (o *opener) err(err error) error {
	if err != nil && o.refused != nil && errors.Is(err, jetstream.ErrKeyNotFound) {
		return o.refused
	}
	return err
}

// update is store.Update for an event of turn p, with the opener's fresh
// and its reading of the error. A turn-level event (u nil) for a turn that
// is over has nothing to do: ok is false and err nil.
func (r *Router) update(ctx context.Context, p subjects.Parsed, u *schemas.ToolUse, fn lease.Mutator) (l *schemas.Lease, ok bool, err error) {
	l, _, ok, err = r.updateRev(ctx, p, u, fn)
	if errors.Is(err, errUnended) {
		return nil, false, nil
	}
	return l, ok, err
}

// updateRev is update with the revision of the lease returned.
func (r *Router) updateRev(ctx context.Context, p subjects.Parsed, u *schemas.ToolUse, fn lease.Mutator) (l *schemas.Lease, rev uint64, ok bool, err error) {
	o := r.opener(ctx, p, u)
	l, rev, err = r.store.Update(ctx, p.Tenant, p.Turn, o.fresh, fn)
	err = o.err(err)
	switch {
	case errors.Is(err, errUnended) && u == nil:
		// For the turn's end (router.end); update makes it nothing to do.
		return nil, 0, false, err
	case errors.Is(err, errTurnOver) && u == nil:
		r.cfg.Log.Debug("router: event for a turn that is over", "tenant", p.Tenant, "turn", p.Turn)
		return nil, 0, false, nil
	case errors.Is(err, errTurnOver):
		if u.Calls > 0 {
			// A turn whose calls carry its count has no end marker. Should
			// it have expired before all its results were delivered, the
			// count must still reach reorder, or the turn never completes;
			// for a turn that did, the marker is turned away.
			if err := r.publishEnd(ctx, p, &schemas.TurnEnd{Calls: u.Calls}); err != nil {
				return nil, 0, false, err
			}
		}
		return nil, 0, false, r.answerLate(ctx, p, u, texts.Expired(u.Seq))
	case err != nil:
		return nil, 0, false, err
	}
	return l, rev, true, nil
}

// answerLate stores the answer of a late call and reports it as late. The
// result is marked late: it is kept for the record, and reorder never
// delivers it, whatever position its seq names.
func (r *Router) answerLate(ctx context.Context, p subjects.Parsed, u *schemas.ToolUse, why string) error {
	if err := r.publishResult(ctx, p, u, why, true, -1); err != nil {
		return err
	}
	return &lateError{reason: why}
}

// publishResult stores the router's error result for call u; a result
// already stored for it (a redelivery) counts as done. total is the turn's
// count as the lease has it (-1: unknown), for reorder.
func (r *Router) publishResult(ctx context.Context, p subjects.Parsed, u *schemas.ToolUse, why string, late bool, total int) error {
	res := answer.Error(u.Seq, u.ToolUseID, u.Name, "router", why, time.Now())
	res.Late, res.TurnCalls = late, max(total, 0)
	subject := r.cfg.Space.Result(p.Tenant, p.Turn, u.Seq)
	err := r.publish(ctx, subject, "", p, "", u.Seq, res)
	if err != nil && !r.subjectHasMsg(ctx, subject) {
		return err
	}
	return nil
}

// closeAt ends a turn whose own end cannot be used (over a limit, or
// unreadable) at the calls seen so far, so that it still completes; why is
// the turn's error.
func (r *Router) closeAt(ctx context.Context, p subjects.Parsed, why string) error {
	l, ok, err := r.update(ctx, p, nil, func(l *schemas.Lease) error {
		if l.Total >= 0 {
			return lease.ErrNoChange
		}
		l.Total = l.Seen()
		return nil
	})
	if !ok {
		return err
	}
	return r.publishEnd(ctx, p, &schemas.TurnEnd{Calls: l.Total, StopReason: "error", Error: why})
}
