package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/internal/tracing"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// call is one routed call being handled by this worker.
type call struct {
	m        jetstream.Msg
	p        subjects.Parsed
	meta     schemas.Meta
	d        *schemas.Dispatch
	t        *tool.Tool
	safe     bool
	readOnly bool
	// batch is the call's greedy batch index, known once it may start.
	batch int
	// reserved is set when the result's characters were already counted
	// in the turn's total.
	reserved bool
	// malformed marks the answer to a dispatch that did not decode.
	malformed bool
	// first is the dispatch's first handling: only then is the lease it
	// carries likely to be current.
	first bool
	// span is the call's execute_tool span once it runs (the zero Span
	// before, and with tracing off).
	span tracing.Span
	// received is when this delivery reached the worker; parked, when the
	// call first had to wait for its turn's start rule (zero: never);
	// waiting, while it still does.
	received, parked time.Time
	waiting          bool
	// outcome names, for the hooks, a call answered other than by its
	// tool's result ("" : ok or error, by the result).
	outcome string
}

// logAttrs are the attributes of every line about the call.
func (c *call) logAttrs() []any {
	return []any{"tenant", c.p.Tenant, "turn", c.p.Turn, "seq", c.d.Seq, "tool", c.d.Tool}
}

// input is the call's validated input.
func (c *call) input() json.RawMessage { return json.RawMessage(c.d.Input) }

// step is what the lease said a call should do next.
type step int

const (
	stepWait        step = iota // not yet: park and retry on change
	stepRun                     // this worker owns the call: run it
	stepSkip                    // done already: just ack
	stepInterrupted             // its worker died mid-run and it may not run twice
	stepHalt                    // the turn was cancelled, discarded or aborted: answer without running
	stepDeny                    // plan mode denies a call that is not read-only
)

// claimed is the outcome of one claim.
type claimed struct {
	st      step
	attempt int
	tc      tool.TurnContext
	text    string // the answer of stepHalt
	seen    uint64 // the lease version the decision was made on
	batch   int    // the call's batch, for a claim made standing
	// until is when another worker's claim on the call runs out (Unix ms),
	// 0 when the call waits for nothing of the kind: a redelivered call
	// looks again then, rather than wait for a change that a dead worker
	// will never make.
	until int64
}

// handle runs one routed call. ctx outlives the receive loop: a call that
// runs when the worker stops finishes and publishes; only a parked call
// gives up (m.Recv ends) and is left unacknowledged for another worker.
func (e *Executor) handle(ctx context.Context, m *stage.Msg) error {
	d, ok := m.Data.(*schemas.Dispatch)
	if !ok {
		return stage.Drop(fmt.Errorf("%s is not a dispatch event", m.Meta.Type))
	}
	c := &call{m: m.Raw, p: m.Subject, meta: m.Meta, d: d, first: m.Delivered == 1 && m.Attempt <= 1, received: time.Now()}
	defer e.keepAlive(c)()
	if err := e.process(ctx, m.Recv, c); err != nil {
		if m.Recv.Err() != nil {
			return stage.Leave()
		}
		return err
	}
	return nil
}

func (e *Executor) process(work, recv context.Context, c *call) error {
	t, ok := e.cfg.Tools.Lookup(c.d.Tool)
	if !ok {
		// The router sent this tool here, but this worker does not host it.
		c.outcome = outcomeRejected
		return e.finish(work, c, e.errorResult(c, time.Now(), 0, texts.NotHosted(c.d.Tool, e.cfg.Pool)), nil, false)
	}
	c.t = t
	c.safe = t.IsConcurrencySafe(c.input())
	c.readOnly = t.IsReadOnly(c.input())
	if c.first {
		e.store.Prime(c.p.Tenant, c.p.Turn, c.d.Lease, c.d.LeaseRev)
	}

	w, err := e.watcher.Watch(c.p.Tenant, c.p.Turn)
	if err != nil {
		return err
	}
	defer w.Release()
	// A parked call stands in the store: a write of this process that
	// lets it start claims it in the same compare-and-set (standing.go).
	var st *standing
	defer func() { st.withdraw(e) }()
	defer e.unpark(c)
	stale := 0
	var next *claimed
	for {
		changed := w.Changed()
		var cl claimed
		if next != nil {
			cl, next = *next, nil
		} else {
			var err error
			if cl, err = e.claim(work, c); err != nil {
				if fired, ok := st.withdraw(e); ok {
					// Claimed for this worker already: it must run.
					cl, err = fired, nil
				} else {
					return err
				}
			}
		}
		if fired, ok := st.take(e); ok {
			cl = fired
		}
		now := time.Now()
		switch cl.st {
		case stepSkip:
			return nil
		case stepInterrupted:
			// A crash counts as the call's failure.
			return e.finish(work, c, e.errorResult(c, now, cl.attempt, texts.OutcomeUnknown), nil, true)
		case stepHalt:
			c.outcome = outcomeCancelled
			return e.finish(work, c, e.errorResult(c, now, cl.attempt, cl.text), nil, false)
		case stepDeny:
			c.outcome = outcomeRejected
			return e.finish(work, c, e.errorResult(c, now, cl.attempt, texts.PlanMode(c.t.Name())), nil, true)
		case stepRun:
			if fired, ok := st.withdraw(e); ok {
				cl = fired
			}
			e.unpark(c)
			return e.run(work, c, w, cl)
		}
		if !st.standing() {
			st = e.stand(c)
		}
		e.park(c)
		if cl.seen < w.Latest() && stale < 20 {
			// A write we were told of is not readable yet: read again
			// shortly rather than wait for a change that already came.
			stale++
			time.Sleep(time.Duration(50<<min(stale, 6)) * time.Microsecond)
			continue
		}
		stale = 0
		recheck := e.cfg.Recheck
		if cl.until > 0 {
			recheck = min(recheck, time.Until(time.UnixMilli(cl.until))+5*time.Millisecond)
		}
		wait := time.NewTimer(recheck)
		select {
		case <-changed:
		case <-st.fired():
			if fired, ok := st.take(e); ok {
				next = &fired
			}
		case <-wait.C:
			// The safety net for a notification lost: read the lease
			// itself, not the cache notifications keep.
			e.store.Forget(c.p.Tenant, c.p.Turn)
		case <-recv.Done():
			wait.Stop()
			if fired, ok := st.withdraw(e); ok {
				// Claimed for this worker as it stopped: it runs, as a
				// call already running does.
				e.unpark(c)
				return e.run(work, c, w, fired)
			}
			return recv.Err()
		}
		wait.Stop()
	}
}

func (e *Executor) keepAliveEvery() time.Duration {
	// AckWait has its default (the claim's deadline) by now. A quarter
	// leaves room for a tick that comes late on a busy machine.
	return e.cfg.Consumer.AckWait / 4
}

// keepAlive tells the server every keepAliveEvery that the call's message
// is still being worked on, for as long as this worker holds it — parked,
// claiming, running, publishing its result — until stop. It goes on its
// own: a lease write that is slow (contention, a broker that is busy) must
// not let the message be redelivered, and the call taken over, while its
// worker is alive. A call done within the first interval sends nothing.
func (e *Executor) keepAlive(c *call) (stop func()) {
	return every(e.keepAliveEvery(), func() { _ = c.m.InProgress() })
}

// claim classifies the call in the lease and decides its next step; when
// the call may start, it takes it for this worker in the same
// compare-and-set.
func (e *Executor) claim(ctx context.Context, c *call) (claimed, error) {
	seq := c.d.Seq
	var out claimed
	l, _, err := e.store.Update(ctx, c.p.Tenant, c.p.Turn, nil, func(l *schemas.Lease) error {
		out = claimed{st: stepWait}
		out.tc = tool.TurnContext{WorkDir: l.WorkDir, PermissionMode: l.PermissionMode, Version: l.ContextVersion}
		lc := l.Call(seq)
		now := time.Now()
		switch lc.State {
		case schemas.CallDone:
			out.st = stepSkip
			return lease.ErrNoChange
		case schemas.CallRunning:
			if now.UnixMilli() < lc.Deadline {
				// Its worker is alive (or not yet known dead): wait, at
				// most until the claim runs out.
				out.until = lc.Deadline
				return lease.ErrNoChange
			}
			if end, within := e.back.graceUntil(now); within && lc.Worker != e.cfg.WorkerID {
				// This worker was just cut off from the server, and so,
				// likely, was the claim's: let it come back first.
				out.until = end
				return lease.ErrNoChange
			}
			out.attempt = lc.Attempts
			if !lc.ReadOnly {
				// The answer is decided by a write, not on this read: a
				// renewal by a worker that is alive after all refuses it,
				// and the call is looked at again. The worker, should it
				// come back, sees the claim gone and stops the call.
				out.st = stepInterrupted
				lc.Worker, lc.Deadline = e.cfg.WorkerID, now.Add(e.cfg.Deadline).UnixMilli()
				return nil
			}
			if text, halted := lease.Halted(l, seq); halted {
				out.st, out.text = stepHalt, text
				return lease.ErrNoChange
			}
			lc.Worker, lc.Deadline = e.cfg.WorkerID, now.Add(e.cfg.Deadline).UnixMilli()
			lc.Attempts++
			out.st, out.attempt = stepRun, lc.Attempts
			c.batch = lease.BatchOf(l, seq)
			return nil
		}
		changed := false
		if lc.State < schemas.CallReady {
			lc.State, lc.Safe, lc.ReadOnly = schemas.CallReady, c.safe, c.readOnly
			if lc.Tool == "" {
				lc.Tool, lc.Pool = c.d.Tool, c.d.Pool
			}
			changed = true
		}
		if text, halted := lease.Halted(l, seq); halted {
			out.st, out.text = stepHalt, text
			return nil
		}
		if lease.ApplyClosedBatches(l) {
			changed = true
			out.tc = tool.TurnContext{WorkDir: l.WorkDir, PermissionMode: l.PermissionMode, Version: l.ContextVersion}
		}
		if lease.CanStart(l, seq) {
			c.batch = lease.BatchOf(l, seq)
			if l.PermissionMode == tool.ModePlan && !c.readOnly && !c.t.PlanModeAllowed() {
				out.st = stepDeny
				return nil
			}
			lc.State, lc.Worker = schemas.CallRunning, e.cfg.WorkerID
			lc.Deadline = now.Add(e.cfg.Deadline).UnixMilli()
			lc.Attempts++
			out.st, out.attempt = stepRun, lc.Attempts
			return nil
		}
		if !changed {
			return lease.ErrNoChange
		}
		return nil
	})
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		// The lease expired or was never written: nothing can order this
		// call any more, so answer it rather than run it blind.
		return claimed{st: stepInterrupted}, nil
	}
	if err != nil {
		return claimed{}, err
	}
	if out.tc.WorkDir == "" {
		out.tc.WorkDir = e.cfg.WorkDir
	}
	out.seen = l.Version
	return out, nil
}

// answer is the executor's stage.Answerer: a dispatch the worker gives up
// on — undecodable, failing on every delivery, or whose handling panicked —
// gets an error result saying why, when its ce-seq still names the call,
// so that the turn completes. The result is published with the usual
// persistence; marking the call done is tried once, since what failed may
// be the lease itself.
func (e *Executor) answer(ctx context.Context, m *stage.Msg, cause error) error {
	seq := m.Meta.Seq
	d, ok := m.Data.(*schemas.Dispatch)
	if !ok {
		d = &schemas.Dispatch{Seq: seq, ToolUseID: "unknown"}
	}
	if seq < 0 || d.Seq != seq {
		return nil
	}
	c := &call{m: m.Raw, p: m.Subject, meta: m.Meta, d: d, malformed: m.Data == nil}
	why := texts.NotExecuted(cause.Error())
	var bad *stage.MalformedError
	if errors.As(cause, &bad) {
		why = texts.MalformedDispatch(cause.Error())
	}
	r := e.errorResult(c, time.Now(), 0, why)
	r.TurnCalls = d.Calls
	if c.malformed {
		// Its turn may have no lease yet, and a result stored without one
		// tells the router that the turn is over: the lease goes first.
		e.tryMarkDone(ctx, c, r, m)
	}
	if err := e.persist(ctx, func() error { return e.publishResult(ctx, c.p, c.meta, r) }); err != nil {
		return err
	}
	if !c.malformed {
		e.tryMarkDone(ctx, c, r, m)
	}
	return nil
}

// tryMarkDone marks an answered call done, once: what failed may be the
// lease itself, and the answer goes out all the same.
func (e *Executor) tryMarkDone(ctx context.Context, c *call, r *schemas.ToolResult, m *stage.Msg) {
	if err := e.markDone(ctx, c, r, nil, false); err != nil {
		e.cfg.Log.Warn("executor: could not mark an answered call done", "subject", m.Raw.Subject(), "err", err)
	}
}
