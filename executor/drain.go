package executor

import (
	"context"
	"errors"
	"time"

	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// DefaultDrainTimeout is how long a stopping worker lets its running calls
// finish before it hands them back: under the 30 s a Kubernetes pod gets
// between SIGTERM and SIGKILL, with room for the rest of the shutdown.
const DefaultDrainTimeout = 20 * time.Second

// errHandedBack stops a call still running when its stopping worker's drain
// deadline passes: the call goes back to the pool, where another worker
// runs it again if it is read-only and answers "outcome unknown" if not,
// exactly as after a crash, only without waiting for the claim to lapse.
var errHandedBack = errors.New("executor: the worker is stopping and its drain deadline passed")

// drainer closes handBack once the worker has been stopping for the drain
// timeout.
type drainer struct {
	handBack chan struct{}
}

func newDrainer() *drainer { return &drainer{handBack: make(chan struct{})} }

// start arms the deadline once ctx (the receive loop's) ends; stop, once
// every call has ended, disarms it.
func (d *drainer) start(ctx context.Context, timeout time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-t.C:
			close(d.handBack)
		case <-done:
		}
	}()
	return func() { close(done) }
}

// watch cancels a running call when the drain deadline passes.
func (d *drainer) watch(cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-d.handBack:
			cancel(errHandedBack)
		case <-done:
		}
	}()
	return func() { close(done) }
}

// handBack gives a stopped call back to the pool: its claim is marked
// lapsed, so that the next worker decides at once (run again if read-only,
// else "outcome unknown"), and its message is asked for again now.
func (e *Executor) handBack(ctx context.Context, c *call) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_, _, err := e.store.Update(wctx, c.p.Tenant, c.p.Turn, nil, func(l *schemas.Lease) error {
		lc := l.Peek(c.d.Seq)
		if lc == nil || lc.State != schemas.CallRunning || lc.Worker != e.cfg.WorkerID {
			return lease.ErrNoChange
		}
		lc.Deadline = time.Now().Add(-time.Millisecond).UnixMilli()
		return nil
	})
	if err != nil {
		// The claim lapses on its own within the deadline.
		e.cfg.Log.Warn("executor: releasing a handed-back call's claim", append(c.logAttrs(), "err", err)...)
	}
	e.cfg.Hooks.OnCall(stage.CallEvent{Stage: subjects.StageExecutor, Tenant: c.p.Tenant, Tool: c.d.Tool, Outcome: "handed_back"})
	c.span.Result("handed_back", "")
	return stage.RetryAfter(errHandedBack, 0)
}
