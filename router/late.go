package router

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/lease"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// lateError is a tool_use that came after its turn's end. Its call must not
// run: it is answered (the result is stored on its result subject, where no
// delivery will reach it) and its event dead-lettered with the reason.
type lateError struct{ reason string }

func (e *lateError) Error() string { return e.reason }

// pastEnd says why call seq is not part of its turn any more, or "".
func pastEnd(l *schemas.Lease, seq int) string {
	if l.Total >= 0 && seq >= l.Total {
		return fmt.Sprintf("tool_use seq %d came after its turn's end, which counted %d calls; not executed", seq, l.Total)
	}
	return ""
}

// errTurnOver is the fresh lease's refusal: the turn has an end marker but
// no lease, so it was completed and its lease expired.
var errTurnOver = errors.New("the turn is over (its end was recorded and its lease has expired)")

// fresh makes the lease of a turn this router sees first — unless the turn
// is over: a late event must not bring an expired turn back to life and
// run. The check costs one read for the first event of a turn only.
//
// The end marker is published only after the lease exists (end, discard,
// closeAt), so a marker without a lease means an expired turn; the lease is
// read again after the marker because another router may have made both
// since this update's read.
func (r *Router) fresh(ctx context.Context, p subjects.Parsed, u *schemas.ToolUse) func() *schemas.Lease {
	return func() *schemas.Lease {
		if u != nil && r.subjectHasMsg(ctx, r.cfg.Space.ResultEnd(p.Tenant, p.Turn)) {
			if _, _, err := r.store.Get(ctx, p.Tenant, p.Turn); errors.Is(err, jetstream.ErrKeyNotFound) {
				return nil
			}
			// It exists now: the create below conflicts, and the update
			// retries on what the other router wrote.
		}
		m := r.cfg.MaxConcurrency
		if u != nil && u.MaxConcurrency > 0 {
			m = u.MaxConcurrency
		}
		return schemas.NewLease(m, time.Now())
	}
}

// freshTurn makes the lease of a turn first seen through a turn-level event.
func (r *Router) freshTurn() *schemas.Lease {
	return schemas.NewLease(r.cfg.MaxConcurrency, time.Now())
}

// turnOver turns an update refused because the turn is over into a late
// answer; other errors pass.
func (r *Router) turnOver(ctx context.Context, p subjects.Parsed, u *schemas.ToolUse, err error) error {
	if !errors.Is(err, jetstream.ErrKeyNotFound) {
		return err
	}
	return r.answerLate(ctx, p, u, fmt.Sprintf("tool_use seq %d: %v; not executed", u.Seq, errTurnOver))
}

// answerLate stores the answer of a late call and reports it as late.
func (r *Router) answerLate(ctx context.Context, p subjects.Parsed, u *schemas.ToolUse, why string) error {
	now := time.Now().UTC()
	res := &schemas.ToolResult{
		Seq: u.Seq, ToolUseID: u.ToolUseID, Name: u.Name, IsError: true,
		Content: why, StartedAt: now, FinishedAt: now, Worker: "router",
	}
	err := r.publish(ctx, r.cfg.Space.Result(p.Tenant, p.Turn, u.Seq), subjects.ResultMsgID(p.Tenant, p.Turn, u.Seq), p, "", u.Seq, res)
	if err != nil && !r.subjectHasMsg(ctx, r.cfg.Space.Result(p.Tenant, p.Turn, u.Seq)) {
		return err
	}
	return &lateError{reason: why}
}

// closeAt ends a turn whose own end cannot be used (over a limit, or
// unreadable) at the calls seen so far, so that it still completes; why is
// the turn's error.
func (r *Router) closeAt(ctx context.Context, p subjects.Parsed, why string) error {
	l, _, err := r.store.Update(ctx, p.Tenant, p.Turn, r.freshTurn, func(l *schemas.Lease) error {
		if l.Total >= 0 {
			return lease.ErrNoChange
		}
		l.Total = l.Seen()
		return nil
	})
	if err != nil {
		return err
	}
	return r.publishEnd(ctx, p, &schemas.TurnEnd{Calls: l.Total, StopReason: "error", Error: why})
}
