package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/lease"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/stage"
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
}

// step is what the lease said a call should do next.
type step int

const (
	stepWait        step = iota // not yet: park and retry on change
	stepRun                     // this worker owns the call: run it
	stepSkip                    // done already: just ack
	stepInterrupted             // its worker died mid-run and it may not run twice
)

// handle takes one message from receipt to ack. work outlives the receive
// loop; recv ends with it, and only parked calls give up then (unacked, so
// another worker gets them).
func (e *Executor) handle(work, recv context.Context, m jetstream.Msg) {
	p, err := e.cfg.Space.ParseExec(m.Subject())
	if err != nil {
		stage.DeadLetter(work, e.js, e.cfg.Space, "", subjects.StageExecutor, m, err, e.cfg.Log)
		return
	}
	meta, data, err := schemas.Decode(m.Headers(), m.Data())
	if err != nil {
		e.poison(work, p, m, err)
		return
	}
	d, ok := data.(*schemas.Dispatch)
	if !ok {
		stage.DeadLetter(work, e.js, e.cfg.Space, p.Tenant, subjects.StageExecutor, m, fmt.Errorf("%s is not a dispatch event", meta.Type), e.cfg.Log)
		return
	}
	c := &call{m: m, p: p, meta: meta, d: d}
	if err := e.process(work, recv, c); err != nil {
		if recv.Err() != nil {
			// Shutting down: leave the message for another worker.
			return
		}
		e.cfg.Log.Warn("executor: retrying call", "subject", m.Subject(), "seq", d.Seq, "err", err)
		_ = m.NakWithDelay(time.Second)
		return
	}
	_ = m.Ack()
}

func (e *Executor) process(work, recv context.Context, c *call) error {
	t, ok := e.cfg.Tools.Lookup(c.d.Tool)
	if !ok {
		// The router sent this tool here, but this worker does not host it.
		return e.finish(work, c, e.errorResult(c, time.Now(), 0, fmt.Sprintf("No such tool available: %s (not hosted by pool %s)", c.d.Tool, e.cfg.Pool)))
	}
	c.t = t
	c.safe = t.IsConcurrencySafe(json.RawMessage(c.d.Input))
	c.readOnly = t.IsReadOnly(json.RawMessage(c.d.Input))

	w, err := e.watcher.Watch(c.p.Tenant, c.p.Turn)
	if err != nil {
		return err
	}
	defer w.Release()
	keepAlive := time.NewTicker(e.keepAliveEvery())
	defer keepAlive.Stop()
	stale := 0
	for {
		changed := w.Changed()
		st, attempt, tc, seen, err := e.claim(work, c)
		if err != nil {
			return err
		}
		switch st {
		case stepSkip:
			return nil
		case stepInterrupted:
			return e.finish(work, c, e.errorResult(c, time.Now(), attempt, "execution interrupted; outcome unknown (the worker running this call stopped, and the call is not read-only, so it was not run again)"))
		case stepRun:
			return e.run(work, c, attempt, tc)
		}
		if seen < w.Latest() && stale < 20 {
			// A write we were told of is not readable yet: read again
			// shortly rather than wait for a change that already came.
			stale++
			time.Sleep(time.Duration(50<<min(stale, 6)) * time.Microsecond)
			continue
		}
		stale = 0
		wait := time.NewTimer(e.cfg.Recheck)
		select {
		case <-changed:
		case <-wait.C:
		case <-keepAlive.C:
			_ = c.m.InProgress()
		case <-recv.Done():
			wait.Stop()
			return recv.Err()
		}
		wait.Stop()
	}
}

func (e *Executor) keepAliveEvery() time.Duration {
	aw := e.cfg.Consumer.AckWait
	if aw <= 0 {
		aw = 30 * time.Second
	}
	return aw / 3
}

// claim classifies the call in the lease and, when the start rule allows,
// takes it for this worker, all in one compare-and-set.
func (e *Executor) claim(ctx context.Context, c *call) (st step, attempt int, tc tool.TurnContext, seen uint64, err error) {
	seq := c.d.Seq
	l, _, err := e.store.Update(ctx, c.p.Tenant, c.p.Turn, nil, func(l *schemas.Lease) error {
		st, attempt = stepWait, 0
		tc = tool.TurnContext{WorkDir: l.WorkDir, PermissionMode: l.PermissionMode, Version: l.ContextVersion}
		if tc.WorkDir == "" {
			tc.WorkDir = e.cfg.WorkDir
		}
		lc := l.Call(seq)
		now := time.Now()
		switch lc.State {
		case schemas.CallDone:
			st = stepSkip
			return lease.ErrNoChange
		case schemas.CallRunning:
			if now.UnixMilli() < lc.Deadline {
				// Its worker is alive (or not yet known dead): wait.
				return lease.ErrNoChange
			}
			if !lc.ReadOnly {
				st, attempt = stepInterrupted, lc.Attempts
				return lease.ErrNoChange
			}
			lc.Worker, lc.Deadline = e.cfg.WorkerID, now.Add(e.cfg.Deadline).UnixMilli()
			lc.Attempts++
			st, attempt = stepRun, lc.Attempts
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
		if lease.CanStart(l, seq) {
			lc.State, lc.Worker = schemas.CallRunning, e.cfg.WorkerID
			lc.Deadline = now.Add(e.cfg.Deadline).UnixMilli()
			lc.Attempts++
			st, attempt = stepRun, lc.Attempts
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
		return stepInterrupted, 0, tc, 0, nil
	}
	if l != nil {
		seen = l.Version
	}
	return st, attempt, tc, seen, err
}

// run executes a claimed call, renewing the claim while it runs, then
// publishes the result and marks the call done.
func (e *Executor) run(ctx context.Context, c *call, attempt int, tc tool.TurnContext) error {
	stopRenew := e.renew(ctx, c)
	started := time.Now()
	res, callErr := e.invoke(ctx, c, tc)
	finished := time.Now()
	stopRenew()
	r := e.shape(c, res, callErr, started, finished, attempt)
	r.ContextVersion = tc.Version
	return e.finish(ctx, c, r)
}

// timeoutGrace lets a tool that enforces its own timeout (Bash) report it
// in its own words before the executor's deadline fires.
const timeoutGrace = time.Second

// invoke runs the tool under its timeout: the call's own where the tool
// allows one, else the tool's, else the executor's default; never beyond
// the global ceiling.
func (e *Executor) invoke(ctx context.Context, c *call, tc tool.TurnContext) (tool.Result, error) {
	timeout := c.t.TimeoutFor(json.RawMessage(c.d.Input))
	if timeout <= 0 {
		timeout = e.cfg.CallTimeout
	}
	timeout = min(timeout, e.cfg.MaxTimeout)
	cctx, cancel := context.WithTimeout(ctx, timeout+timeoutGrace)
	defer cancel()
	res, err := c.t.Call(cctx, json.RawMessage(c.d.Input), tc, nil)
	if err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%s timed out after %s: %w", c.t.Name(), timeout, err)
	}
	return res, err
}

// renew keeps a running call's claim and message alive until stopped.
func (e *Executor) renew(ctx context.Context, c *call) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		every := min(e.cfg.Deadline/3, e.keepAliveEvery())
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				_ = c.m.InProgress()
				_, _, err := e.store.Update(ctx, c.p.Tenant, c.p.Turn, nil, func(l *schemas.Lease) error {
					lc := l.Call(c.d.Seq)
					if lc.State != schemas.CallRunning || lc.Worker != e.cfg.WorkerID {
						return lease.ErrNoChange
					}
					lc.Deadline = time.Now().Add(e.cfg.Deadline).UnixMilli()
					return nil
				})
				if err != nil {
					e.cfg.Log.Warn("executor: renewing claim", "turn", c.p.Turn, "seq", c.d.Seq, "err", err)
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

// finish publishes the call's result, then marks it done in the lease.
func (e *Executor) finish(ctx context.Context, c *call, r *schemas.ToolResult) error {
	if err := e.publishResult(ctx, c.p, c.meta.TraceParent, r); err != nil {
		return err
	}
	_, _, err := e.store.Update(ctx, c.p.Tenant, c.p.Turn, nil, func(l *schemas.Lease) error {
		lc := l.Call(c.d.Seq)
		if lc.State == schemas.CallDone {
			return lease.ErrNoChange
		}
		lc.State, lc.Worker, lc.Deadline = schemas.CallDone, "", 0
		return nil
	})
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	return err
}

// poison dead-letters an undecodable dispatch; when the subject and ce-seq
// still say which call it was, the call gets an error result.
func (e *Executor) poison(ctx context.Context, p subjects.Parsed, m jetstream.Msg, cause error) {
	stage.DeadLetter(ctx, e.js, e.cfg.Space, p.Tenant, subjects.StageExecutor, m, cause, e.cfg.Log)
	meta := schemas.Meta{Seq: -1}
	if _, err := fmt.Sscan(m.Headers().Get("ce-seq"), &meta.Seq); err != nil || meta.Seq < 0 {
		return
	}
	c := &call{m: m, p: p, meta: meta, d: &schemas.Dispatch{Seq: meta.Seq, ToolUseID: "unknown"}}
	if err := e.finish(ctx, c, e.errorResult(c, time.Now(), 0, "malformed dispatch event: "+cause.Error())); err != nil {
		e.cfg.Log.Error("executor: could not answer a malformed call", "subject", m.Subject(), "err", err)
	}
}
