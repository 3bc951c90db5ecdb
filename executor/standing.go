package executor

import (
	"time"

	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool"
)

// standing is a parked call's standing claim in the lease store: when a
// write of this process (the done mark of the call before it, most often)
// lets the call start, the claim rides on that write.
type standing struct {
	s   *lease.Standing
	c   *call
	out claimed
}

// stand registers c's standing claim. It only ever claims: every other
// outcome (a halt, a denial, a takeover) is the parked call's own loop's to
// find, from the notification of the write that caused it.
func (e *Executor) stand(c *call) *standing {
	st := &standing{c: c}
	seq := c.d.Seq
	st.s = e.store.Stand(c.p.Tenant, c.p.Turn, func(l *schemas.Lease) error {
		lc := l.Peek(seq)
		if lc == nil || lc.State != schemas.CallReady || !lease.CanStart(l, seq) {
			return lease.ErrNoChange
		}
		if _, halted := lease.Halted(l, seq); halted {
			return lease.ErrNoChange
		}
		if l.PermissionMode == tool.ModePlan && !c.readOnly && !c.t.PlanModeAllowed() {
			return lease.ErrNoChange
		}
		lease.ApplyClosedBatches(l)
		lc = l.Call(seq)
		lc.State, lc.Worker = schemas.CallRunning, e.cfg.WorkerID
		lc.Deadline = time.Now().Add(e.cfg.Deadline).UnixMilli()
		lc.Attempts++
		st.out = claimed{st: stepRun, attempt: lc.Attempts, batch: lease.BatchOf(l, seq),
			tc: tool.TurnContext{WorkDir: l.WorkDir, PermissionMode: l.PermissionMode, Version: l.ContextVersion}}
		return nil
	})
	return st
}

// standing reports whether the claim stands (made and not yet ended).
func (st *standing) standing() bool { return st != nil && st.s != nil }

// fired is closed once the claim is written; nil (never ready) when the
// claim does not stand.
func (st *standing) fired() <-chan struct{} {
	if !st.standing() {
		return nil
	}
	return st.s.Fired()
}

// take returns the claim if it was written, ending the standing claim.
func (st *standing) take(e *Executor) (claimed, bool) {
	if !st.standing() {
		return claimed{}, false
	}
	select {
	case <-st.s.Fired():
		return st.withdraw(e)
	default:
		return claimed{}, false
	}
}

// withdraw ends the standing claim; when it was written meanwhile, the
// claim is returned and the call must run.
func (st *standing) withdraw(e *Executor) (claimed, bool) {
	if !st.standing() {
		return claimed{}, false
	}
	s := st.s
	st.s = nil
	if !e.store.Withdraw(s) {
		return claimed{}, false
	}
	l, _ := s.Result()
	out := st.out
	if out.tc.WorkDir == "" {
		out.tc.WorkDir = e.cfg.WorkDir
	}
	out.seen = l.Version
	st.c.batch = out.batch
	return out, true
}
