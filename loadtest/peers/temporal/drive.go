package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolwire/toolwire/loadtest"
)

// driver runs turns as workflows through one client.
type driver struct {
	c     client.Client
	cfg   Config
	runID string // keeps workflow ids unique across runs on one server
	slow  *slowLog
}

// runTurn starts turn k's workflow and waits for its result, as an agent
// would: ExecuteWorkflow, then Get.
func (d *driver) runTurn(ctx context.Context, k uint64) *turnObs {
	o := &turnObs{turn: fmt.Sprintf("%s-%d", d.runID, k), safe: drawTurn(d.cfg, k)}
	opts := client.StartWorkflowOptions{
		ID:        "turn-" + o.turn,
		TaskQueue: TaskQueue,
		// A workflow whose driver gave up is not left running.
		WorkflowExecutionTimeout: d.cfg.Duration + Drain,
		EnableEagerStart:         d.cfg.Worker.Eager,
	}
	in := TurnInput{Turn: o.turn, Safe: o.safe, MaxConcurrency: d.cfg.MaxConcurrency}
	o.t0 = time.Now()
	run, err := d.c.ExecuteWorkflow(ctx, opts, TurnWorkflowName, in)
	if err != nil {
		o.err = err
		return o
	}
	o.started = true
	var results []CallResult
	if err := run.Get(ctx, &results); err != nil {
		o.err = err
		return o
	}
	o.done = time.Now()
	o.results = results
	d.slow.note(ctx, d.c, o, opts.ID)
	return o
}

// drive runs the workload: closed loop or open loop for the duration, as
// synth's drive does, then lets the turns in flight finish for Drain, after
// which their missing results are lost. Progress, when set, gets a line
// every few seconds.
func (d *driver) drive(ctx context.Context, progress io.Writer) *loadtest.Report {
	c := d.cfg
	t := newTally(c.MaxConcurrency)
	start := time.Now()
	tctx, cancel := context.WithDeadline(ctx, start.Add(c.Duration+Drain))
	defer cancel()
	stopTicking := tick(start, progress, t.progress)
	// The same closed or open loop as synth's.
	loadtest.Loop(ctx, c.schedule(), start, func(k uint64) { t.add(d.runTurn(tctx, k)) })
	stopTicking()
	return t.report(start)
}

// tick writes the elapsed time and results so far to w every 5 s until
// the returned stop is called; nothing when w is nil.
func tick(start time.Time, w io.Writer, results func() int) (stop func()) {
	if w == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				fmt.Fprintf(w, "  %4.0f s  %d results\n", now.Sub(start).Seconds(), results())
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
