package main

import (
	"context"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/toolwire/toolwire/internal/refsched"
)

// Names the workflow and activity are registered under.
const (
	TurnWorkflowName = "Turn"
	NoopActivityName = "Noop"
)

// TurnInput is one turn: its calls' safe flags and the limit on calls
// running at once.
type TurnInput struct {
	Turn           string
	Safe           []bool
	MaxConcurrency int
}

// Call is one call of a turn, the no-op activity's input.
type Call struct {
	Turn string
	Seq  int
}

// CallResult is a call's result: which call it answers and when the
// activity ran (Unix nanoseconds, on this process's clock, since the worker
// runs here).
type CallResult struct {
	Turn                string
	Seq                 int
	StartedAt, FinishAt int64
}

// activityTimeout bounds one attempt of a no-op activity; it is a bound
// Temporal requires, far above what a no-op takes.
const activityTimeout = 30 * time.Second

// Turn is the workflow of one turn: it runs the calls as activities under
// toolwire's start rule (consecutive safe calls in parallel, up to the
// limit; an unsafe call alone, after every earlier one) and returns their
// results in call order. With every call safe and no more calls than the
// limit, that is all of them at once.
func Turn(ctx workflow.Context, in TurnInput) ([]CallResult, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: activityTimeout,
		// A no-op does not fail; a retry would hide a lost attempt behind
		// a late result, and the load test counts it lost instead.
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	limit := max(in.MaxConcurrency, 1)
	out := make([]CallResult, len(in.Safe))
	for _, batch := range refsched.Batches(in.Safe) {
		if err := runBatch(ctx, in.Turn, batch, limit, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// runBatch runs the calls of one batch, at most limit at once, each next
// one started as an earlier one finishes, into out.
func runBatch(ctx workflow.Context, turn string, batch []int, limit int, out []CallResult) error {
	sel := workflow.NewSelector(ctx)
	var first error
	next := 0
	start := func() {
		seq := batch[next]
		next++
		f := workflow.ExecuteActivity(ctx, NoopActivityName, Call{Turn: turn, Seq: seq})
		sel.AddFuture(f, func(f workflow.Future) {
			if err := f.Get(ctx, &out[seq]); err != nil && first == nil {
				first = err
			}
		})
	}
	for next < len(batch) && next < limit {
		start()
	}
	for range batch {
		sel.Select(ctx)
		if next < len(batch) {
			start()
		}
	}
	return first
}

// Noop is the no-op tool as an activity: it returns at once, saying when
// it ran, so that the tool's run time can be taken off e2e as synth does.
func Noop(_ context.Context, c Call) (CallResult, error) {
	started := time.Now().UnixNano()
	return CallResult{Turn: c.Turn, Seq: c.Seq, StartedAt: started, FinishAt: time.Now().UnixNano()}, nil
}
