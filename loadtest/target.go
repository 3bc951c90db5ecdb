package loadtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
	"github.com/toolwire/toolwire/tool/testtools"
)

// target is the pipeline a run drives: started in the process, or served
// elsewhere.
type target struct {
	nc *nats.Conn
	cl *client.Client
	// p is the in-process pipeline (nil with Config.NATS).
	p     *pipeline.Pipeline
	close func()
}

// startTarget starts an embedded server and a pipeline in a temporary
// directory, or connects to the served pipeline at c.NATS.
func startTarget(ctx context.Context, c Config) (_ *target, err error) {
	t := &target{close: func() {}}
	var undo []func()
	t.close = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	if c.NATS != "" {
		if t.nc, err = nats.Connect(c.NATS, append([]nats.Option{nats.Name("toolwire-loadtest")}, c.NATSOptions...)...); err != nil {
			return nil, fmt.Errorf("loadtest: connect %s: %w", c.NATS, err)
		}
		undo = append(undo, t.nc.Close)
	} else {
		dir, err := os.MkdirTemp("", "toolwire-loadtest-")
		if err != nil {
			return nil, fmt.Errorf("loadtest: %w", err)
		}
		undo = append(undo, func() { _ = os.RemoveAll(dir) })
		srv, err := embedded.Start(embedded.Options{StoreDir: dir, MaxMemory: 256 << 20, MaxStore: 2 << 30})
		if err != nil {
			return nil, fmt.Errorf("loadtest: %w", err)
		}
		undo = append(undo, srv.Shutdown)
		reg, err := tool.NewRegistry(append(builtin.Tools(), testtools.Tools()...)...)
		if err != nil {
			return nil, fmt.Errorf("loadtest: %w", err)
		}
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		t.p, err = pipeline.Start(sctx, srv.Connect, pipeline.Config{
			Space: subjects.Default(), Tools: reg, Executors: c.Executors,
			MaxConcurrency: c.MaxConcurrency, WorkDir: dir,
		})
		if err != nil {
			return nil, fmt.Errorf("loadtest: %w", err)
		}
		p := t.p
		undo = append(undo, func() { _ = p.Stop() })
		if t.nc, err = srv.Connect("toolwire-loadtest"); err != nil {
			return nil, fmt.Errorf("loadtest: %w", err)
		}
		undo = append(undo, t.nc.Close)
	}
	if t.cl, err = client.New(t.nc, client.Config{Space: subjects.Default()}); err != nil {
		return nil, fmt.Errorf("loadtest: %w", err)
	}
	return t, nil
}

// stageMsgs is what the in-process stages have sent so far (0 with NATS).
func (t *target) stageMsgs() uint64 {
	if t.p == nil {
		return 0
	}
	return t.p.Stats().OutMsgs
}

// turn runs one turn through the pipeline: the calls are published (all at
// once, or paced over the stream time) while the results are read.
func (t *target) turn(c Config) runTurn {
	return func(ctx context.Context, k uint64, spec turnSpec) *turnObs {
		id := client.NewTurnID()
		calls := spec.calls(c.ServiceTime)
		o := &turnObs{spec: spec, pubAt: make([]time.Time, len(calls))}
		opts := client.TurnOptions{MaxConcurrency: c.MaxConcurrency}
		// Reading stops when the turn cannot complete: its end was never
		// stored.
		rctx, stop := context.WithCancelCause(ctx)
		defer stop(nil)
		published := make(chan error, 1)
		go func() {
			publish := t.publish
			if c.Mode == ModeWaitForEnd {
				publish = t.publishHeld
			}
			err := publish(ctx, id, calls, opts, c.StreamTime, o.pubAt)
			if err != nil {
				stop(err)
			}
			published <- err
		}()
		for d, err := range t.cl.Results(rctx, id) {
			if err != nil {
				break
			}
			if d.Done != nil {
				o.doneAt = d.At
				break
			}
			r := d.Result
			o.deliveries = append(o.deliveries, delivery{seq: r.Seq, at: d.At, start: r.StartedAt, finish: r.FinishedAt, isError: r.IsError})
		}
		o.err = <-published
		return o
	}
}

// publish submits a turn's calls, recording when each was published.
func (t *target) publish(ctx context.Context, id string, calls []client.Call, opts client.TurnOptions, stream time.Duration, pubAt []time.Time) error {
	if stream <= 0 {
		now := time.Now()
		for i := range pubAt {
			pubAt[i] = now
		}
		return t.cl.SubmitCalls(ctx, id, calls, opts)
	}
	t0 := time.Now()
	for i, call := range calls {
		if !pace(ctx, t0, stream, i, len(calls)) {
			return ctx.Err()
		}
		pubAt[i] = time.Now()
		if err := t.cl.SubmitCall(ctx, id, i, call, opts); err != nil {
			var tooLarge *client.CallTooLargeError
			if !errors.As(err, &tooLarge) {
				pubAt[i] = time.Time{}
				return err
			}
		}
	}
	if !pace(ctx, t0, stream, len(calls), len(calls)) {
		return ctx.Err()
	}
	return t.cl.EndTurn(ctx, id, len(calls), "tool_use")
}
