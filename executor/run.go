package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/internal/tracing"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// timeoutGrace lets a tool that enforces its own timeout (Bash) report it
// in its own words before the executor's deadline fires.
const timeoutGrace = time.Second

// errStopped marks a call stopped by its turn (interrupt, discard or a
// sibling's error); the cause's text is the call's result.
var errStopped = errors.New("stopped by the turn")

// errClaimLost stops a call whose claim another worker holds now (its own
// lapsed while this worker could not renew it, and the call's message went
// to that worker): the call is that worker's, and this one must neither go
// on with its side effects nor publish a result.
var errClaimLost = errors.New("executor: the call's claim was taken over by another worker")

// errCutOff stops a call whose worker has been cut off from the server for
// longer than the claim's deadline: the claim cannot be renewed, so the
// call will be answered "outcome unknown" once the server is back, and its
// side effects must not go on meanwhile. A call that finished before the
// cut-off keeps its result.
var errCutOff = errors.New("executor: cut off from the server for longer than the claim's deadline")

// run executes a claimed call, renewing the claim while it runs and
// stopping it when the turn says so, then publishes the result and marks
// the call done.
func (e *Executor) run(ctx context.Context, c *call, w *lease.Watch, cl claimed) error {
	ctx, c.span = e.tracer.StartCall(ctx, tracing.Call{Tool: c.d.Tool, ID: c.d.ToolUseID, Tenant: c.p.Tenant, Turn: c.p.Turn, Seq: c.d.Seq, Attempt: cl.attempt})
	defer c.span.End()
	if p, s := c.span.Trace(); p != "" {
		// The result continues the trace from the call's span.
		c.meta.TraceParent, c.meta.TraceState = p, s
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopRenew := e.renew(ctx, c)
	stopCutOff := e.watchCutOff(cancel)
	stopDrain := e.drain.watch(cancel)
	stopMonitor := e.monitor(c, w, cl.attempt, cancel)
	var reported atomic.Bool
	progress := e.progress(ctx, c, &reported)
	started := time.Now()
	e.started(c, started)
	input, refusal, err := e.permit(cctx, c, cl.tc)
	var res tool.Result
	var callErr error
	switch {
	case err != nil && context.Cause(cctx) == nil:
		callErr = fmt.Errorf("permission check: %w", err)
	case err == nil && refusal != "":
		// A refusal is the call's failure (docs/orchestration.md, Sibling cancellation).
		res = tool.Result{Content: refusal, IsError: true}
		c.outcome = outcomeRejected
	case err == nil:
		res, callErr = e.invoke(cctx, c, input, cl.tc, progress)
	}
	finished := time.Now()
	stopCutOff()
	stopDrain()
	stopMonitor()
	if errors.Is(context.Cause(cctx), errHandedBack) && (callErr != nil || err != nil) {
		// Stopped by the deadline, running or waiting for its approval
		// (a tool that finished first keeps its result: callErr is nil).
		stopRenew()
		e.cfg.Log.Warn("executor: handed a running call back at the drain deadline", c.logAttrs()...)
		return e.handBack(ctx, c)
	}
	if cause := context.Cause(cctx); errors.Is(cause, errClaimLost) || errors.Is(cause, errCutOff) {
		stopRenew()
		e.cfg.Log.Warn("executor: stopped a call", append(c.logAttrs(), "why", cause)...)
		// Its message is the other worker's delivery now: neither acked
		// nor nakked here.
		return stage.Leave()
	}
	// The claim and the message stay alive until the result is stored and
	// the call marked done (stopRenew below): a call that finished while
	// the broker was away must not be answered "outcome unknown" by the
	// worker its message is redelivered to.
	defer stopRenew()

	fails := callErr != nil || c.t.IsFailure(res)
	var r *schemas.ToolResult
	if cause := context.Cause(cctx); errors.Is(cause, errStopped) {
		// The turn stopped the call: its answer is the reason, and it is
		// not a failure of its own.
		r = e.errorResult(c, finished, cl.attempt, stoppedText(cause))
		r.StartedAt = started.UTC()
		c.outcome = outcomeCancelled
		fails, res.Context = false, nil
	} else {
		r = e.shape(ctx, c, res, callErr, started, finished, cl.attempt)
	}
	r.ContextVersion, r.Batch = cl.tc.Version, c.batch
	e.publishFinished(ctx, c, reported.Load(), finished.Sub(started))
	return e.finish(ctx, c, r, res.Context, fails)
}

// stoppedError carries the text a stopped call answers with.
type stoppedError struct{ text string }

func (s *stoppedError) Error() string { return s.text }
func (s *stoppedError) Unwrap() error { return errStopped }

func stoppedText(cause error) string {
	var s *stoppedError
	if errors.As(cause, &s) {
		return s.text
	}
	return cause.Error()
}

// monitor stops the call when a lease change says the turn wants it
// stopped: the change is read from the notification itself, so a call in
// any process dies within a notification's latency of the mark.
func (e *Executor) monitor(c *call, w *lease.Watch, attempt int, cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	interruptible := c.t.InterruptBehavior() == tool.InterruptCancel
	go func() {
		defer close(finished)
		for {
			changed := w.Changed()
			if l := w.Last(); l != nil {
				if lostClaim(l.Peek(c.d.Seq), e.cfg.WorkerID, attempt) {
					// Answered or running elsewhere: whatever the tool
					// allows, it stops here.
					cancel(errClaimLost)
					return
				}
				if text, ok := lease.StopRunning(l, c.d.Seq, interruptible); ok {
					cancel(&stoppedError{text: text})
					return
				}
			}
			select {
			case <-changed:
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}

// lostClaim says whether the lease shows this worker's claim on a call
// (attempt) gone to another: the call answered, or running on another
// worker. A lease from before the claim (fewer attempts) says nothing.
func lostClaim(lc *schemas.LeaseCall, worker string, attempt int) bool {
	if lc == nil || lc.Attempts < attempt {
		return false
	}
	return lc.State == schemas.CallDone || lc.State == schemas.CallRunning && lc.Worker != worker
}

// invoke runs the tool under its timeout: the call's own where the tool
// allows one, else the tool's, else the executor's default; never beyond
// the global ceiling.
func (e *Executor) invoke(ctx context.Context, c *call, input []byte, tc tool.TurnContext, progress tool.Progress) (tool.Result, error) {
	timeout := c.t.TimeoutFor(input)
	if timeout <= 0 {
		timeout = e.cfg.CallTimeout
	}
	timeout = min(timeout, e.cfg.MaxTimeout)
	tctx, cancel := context.WithTimeout(ctx, timeout+timeoutGrace)
	defer cancel()
	// From the dispatch as the router wrote it: the same on every attempt.
	tc.IdempotencyKey = tool.IdempotencyKey(c.p.Tenant, c.p.Turn, c.d.ToolUseID, c.d.Tool, json.RawMessage(c.d.Input))
	res, err := c.t.Call(tctx, input, tc, progress)
	if err != nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("%s: %w", texts.Timeout(c.t.Name(), timeout), err)
	}
	return res, err
}

// watchCutOff stops the running call (cancel) once the worker has been
// cut off from the server for longer than the claim's deadline. It runs on
// its own timer: a lease write that hangs must not hold it up.
func (e *Executor) watchCutOff(cancel context.CancelCauseFunc) (stop func()) {
	return every(e.cfg.Deadline/4, func() {
		if e.back.cutOff(time.Now()) > e.cfg.Deadline {
			cancel(errCutOff)
		}
	})
}

// renew keeps a running call's claim alive until stopped (its message is
// kept alive by keepAlive).
func (e *Executor) renew(ctx context.Context, c *call) (stop func()) {
	return every(e.cfg.Deadline/3, func() {
		_, _, err := e.store.Update(ctx, c.p.Tenant, c.p.Turn, nil, func(l *schemas.Lease) error {
			lc := l.Peek(c.d.Seq)
			if lc == nil || lc.State != schemas.CallRunning || lc.Worker != e.cfg.WorkerID {
				return lease.ErrNoChange
			}
			lc.Deadline = time.Now().Add(e.cfg.Deadline).UnixMilli()
			return nil
		})
		if err != nil {
			e.cfg.Log.Warn("executor: renewing claim", append(c.logAttrs(), "err", err)...)
		}
	})
}

// every runs fn every d (not at once) until stop, which returns once fn
// is not running. It is a timer, not a goroutine: most calls end before
// the first tick, and cost nothing but the timer then.
func every(d time.Duration, fn func()) (stop func()) {
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	mu.Lock()
	defer mu.Unlock()
	t = time.AfterFunc(d, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		fn()
		t.Reset(d)
	})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		t.Stop()
	}
}

// finish publishes the call's result, then marks it done in the lease in
// one compare-and-set with what the result means for the turn: a failure
// of a tool that cancels its siblings aborts the turn's unfinished calls,
// a context change is applied or queued, finished batches apply theirs.
//
// Both writes are retried through connection loss: the call has run, and a
// result given up here would come back as "outcome unknown".
func (e *Executor) finish(ctx context.Context, c *call, r *schemas.ToolResult, change *tool.ContextChange, fails bool) error {
	// The turn's count, when the router knew it, lets reorder complete
	// the turn from its results.
	r.TurnCalls = c.d.Calls
	if err := e.persist(ctx, func() error { return e.publishResult(ctx, c.p, c.meta, r) }); err != nil {
		return err
	}
	outcome, errType := "ok", ""
	switch {
	case c.outcome != "":
		outcome = c.outcome
		if r.IsError {
			errType = c.outcome
		}
	case r.IsError:
		outcome, errType = "error", "tool_error"
	}
	c.span.Result(outcome, errType)
	e.cfg.Hooks.OnCall(stage.CallEvent{Stage: subjects.StageExecutor, Tenant: c.p.Tenant, Tool: c.d.Tool, Outcome: outcome, Ran: max(r.FinishedAt.Sub(r.StartedAt), 0)})
	return e.persist(ctx, func() error { return e.markDone(ctx, c, r, change, fails) })
}

// persistFor bounds how long finish keeps retrying its writes.
const persistFor = 2 * time.Minute

// persist runs write until it succeeds, backing off, for up to persistFor.
func (e *Executor) persist(ctx context.Context, write func() error) error {
	deadline := time.Now().Add(persistFor)
	delay := 50 * time.Millisecond
	for {
		err := write()
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil || jserr.Gone(ctx, e.js, err, e.cfg.Space.ResultStream(), e.cfg.Space.LeaseStream()) {
			// A closed connection never comes back (the message will be
			// redelivered to another worker instead), and neither does a
			// deleted stream or bucket.
			return err
		}
		e.cfg.Log.Warn("executor: retrying a write", "err", err, "in", delay)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
		// Short steps: a write that failed because a stream was electing
		// a leader goes through within a step of its return, as the
		// stages' held messages do (their retry is 250 ms too).
		delay = min(2*delay, 250*time.Millisecond)
	}
}

// markDone marks the call done with what its result means for the turn.
func (e *Executor) markDone(ctx context.Context, c *call, r *schemas.ToolResult, change *tool.ContextChange, fails bool) error {
	seq := c.d.Seq
	cancels := fails && c.t != nil && c.t.CancelsSiblings()
	// The router registers every call it dispatches first, so a missing
	// lease is an expired turn, and making one would bring it back. Only a
	// malformed dispatch may be answered before its turn's lease exists; its
	// answer must count, or the turn waits for the call for ever.
	var fresh func() *schemas.Lease
	if c.malformed {
		fresh = func() *schemas.Lease { return schemas.NewLease(lease.DefaultMaxConcurrency, time.Now()) }
	}
	_, _, err := e.store.Update(ctx, c.p.Tenant, c.p.Turn, fresh, func(l *schemas.Lease) error {
		lc := l.Call(seq)
		if lc.State == schemas.CallDone {
			return lease.ErrNoChange
		}
		lc.State, lc.Worker, lc.Deadline = schemas.CallDone, "", 0
		if !c.reserved {
			l.Chars += int64(utf8.RuneCountInString(r.Content))
		}
		if cancels {
			lease.Abort(l, seq, c.t.Activity(c.input()))
		}
		if change != nil {
			lease.QueueChange(l, schemas.ContextChange{Seq: seq, WorkDir: change.WorkDir, PermissionMode: change.PermissionMode}, c.safe)
		}
		lease.ApplyClosedBatches(l)
		return nil
	})
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	return err
}
