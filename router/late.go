package router

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/answer"
	"github.com/toolwire/toolwire/internal/jserr"
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

// errTurnOver is an opener's refusal: the turn has results or its end
// marker stored, or results delivered, but no lease, so its lease expired.
var errTurnOver = errors.New(texts.TurnOver)

// errUnended is errTurnOver for a turn whose lease expired before its end
// came (results delivered, no end marker): no call of it may run any more,
// but its turn_end must still reach reorder, or the turn never completes.
var errUnended = fmt.Errorf("%w before its end came", errTurnOver)

// opener makes the lease of a turn this router sees first — unless the
// turn is over: a late or replayed event must not bring an expired turn
// back to life, and a call of it run. The check costs two reads, for the
// first event of a turn only.
type opener struct {
	r   *Router
	ctx context.Context
	p   subjects.Parsed
	max int
	// refused is why fresh made no lease: errTurnOver, or the read that
	// could not tell (then the event is retried: a lease made blind could
	// revive a turn).
	refused error
	// found is the turn's first message in the result stream, when fresh
	// found one.
	found *jetstream.RawStreamMsg
}

// opener returns the lease maker for an event of turn p; u is the call, nil
// for a turn-level event.
func (r *Router) opener(ctx context.Context, p subjects.Parsed, u *schemas.ToolUse) *opener {
	o := &opener{r: r, ctx: ctx, p: p, max: r.cfg.MaxConcurrency}
	if u != nil && u.MaxConcurrency > 0 {
		o.max = u.MaxConcurrency
	}
	return o
}

// fresh is the lease.Store's fresh function. It reads, at once, the
// turn's out subject and whatever the turn has in the result stream (the
// first message on any of its subjects): a call's result or the end
// marker. A result is stored only once its call was routed on the lease,
// and the end marker only after the lease exists (end, discard, closeAt);
// each stays in the result stream until reorder has appended it (the
// marker: turn_done), and what reorder appended stays on the out subject.
// So for a turn whose lease existed, one of the two reads finds something
// from the first result or end on, reorder behind or not; the lease lives
// until then (a turn is complete only once its calls are done). Found
// without a lease, it means the turn is over and its lease expired. This
// holds for every kind of turn: one ended by a turn_end, and one whose
// calls carried its count, which has no end marker. The lease is read
// again after the reads because another router may have made it since the
// store's read.
func (o *opener) fresh() *schemas.Lease {
	o.refused, o.found = nil, nil
	ctx, cancel := jserr.Bound(o.ctx)
	defer cancel()
	var inErr error
	var in *jetstream.RawStreamMsg
	read := make(chan struct{})
	go func() {
		defer close(read)
		in, inErr = o.r.results.GetMsg(ctx, 0, jetstream.WithGetMsgSubject(o.r.cfg.Space.TurnResults(o.p.Tenant, o.p.Turn)))
	}()
	// Another tenant's message aimed at the out subject says nothing of
	// this turn: only one of its own does.
	outSubject := o.r.cfg.Space.Out(o.p.Tenant, o.p.Turn)
	_, _, outErr := o.r.out.LastWhere(ctx, outSubject, func(m *jetstream.RawStreamMsg) bool {
		return schemas.OwnedBy(m.Header, outSubject, o.p.Tenant, o.p.Turn)
	})
	<-read
	switch {
	case errors.Is(outErr, jetstream.ErrMsgNotFound) && errors.Is(inErr, jetstream.ErrMsgNotFound):
		return schemas.NewLease(o.max, time.Now())
	case outErr != nil && !errors.Is(outErr, jetstream.ErrMsgNotFound):
		o.refused = fmt.Errorf("router: read the turn's out subject: %w", outErr)
		return nil
	case inErr != nil && !errors.Is(inErr, jetstream.ErrMsgNotFound):
		o.refused = fmt.Errorf("router: read the turn's results: %w", inErr)
		return nil
	}
	o.found = in
	l, _, err := o.r.store.Get(o.ctx, o.p.Tenant, o.p.Turn)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound) && (in == nil || in.Subject != o.r.cfg.Space.ResultEnd(o.p.Tenant, o.p.Turn)):
		// Not known to have its end marker (the first message found is
		// a result, or there is none left): its end may never have come.
		o.refused = errUnended
		return nil
	case errors.Is(err, jetstream.ErrKeyNotFound):
		o.refused = errTurnOver
		return nil
	case err != nil:
		o.refused = fmt.Errorf("router: read the turn's lease: %w", err)
		return nil
	}
	// It exists now (another router made it since the store's read, or
	// this read is a replica's that has not yet expired what the leader
	// has). The update works on what it holds: the create conflicts and
	// the update retries on the lease as written — or, should the lease
	// have expired on the leader meanwhile, the create puts back the
	// finished lease, whose count turns this call away, never an empty
	// one that would make the finished turn live again and park this
	// call behind calls that will never come.
	return l
}

// count is the number of calls to close an expired turn at, for a call u
// that carries its turn's count and found the turn over: the count its
// results carry when fresh found one (the first count a turn got holds,
// and a later call may disagree), else u's own; 0 when the turn's end
// marker is stored already.
func (o *opener) count(u *schemas.ToolUse) int {
	if o.found == nil {
		return u.Calls
	}
	if o.found.Subject == o.r.cfg.Space.ResultEnd(o.p.Tenant, o.p.Turn) {
		return 0
	}
	if _, d, err := o.r.cfg.Limits.Decode(o.found.Header, o.found.Data); err == nil && schemas.TurnCount(d) > 0 {
		return schemas.TurnCount(d)
	}
	return u.Calls
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
		if n := o.count(u); u.Calls > 0 && n > 0 {
			// A turn whose calls carry its count has no end marker. Should
			// it have expired before all its results were delivered, the
			// count must still reach reorder, or the turn never completes;
			// for a turn that did, the marker is turned away.
			if err := r.publishEnd(ctx, p, &schemas.TurnEnd{Calls: n}); err != nil {
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
	err := r.publish(ctx, subject, "", p, u.Seq, res)
	if err != nil && !r.subjectHasMsg(ctx, subject) {
		return err
	}
	return nil
}

// closeAt ends a turn whose own end cannot be used (over a limit, or
// unreadable) at the calls seen so far, so that it still completes; why is
// the turn's error.
func (r *Router) closeAt(ctx context.Context, p subjects.Parsed, why string) error {
	return r.closeWith(ctx, p, (*schemas.Lease).Seen, why)
}

// closeWith gives the turn the count calls(l) when it has none, then
// publishes its end marker with the count that holds; why is the turn's
// error.
func (r *Router) closeWith(ctx context.Context, p subjects.Parsed, calls func(*schemas.Lease) int, why string) error {
	l, ok, err := r.update(ctx, p, nil, func(l *schemas.Lease) error {
		if l.Total >= 0 {
			return lease.ErrNoChange
		}
		l.Total = calls(l)
		return nil
	})
	if !ok {
		return err
	}
	return r.publishEnd(ctx, p, &schemas.TurnEnd{Calls: l.Total, StopReason: "error", Error: why})
}
