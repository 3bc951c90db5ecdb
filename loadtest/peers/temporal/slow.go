package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
)

// slowLog writes a line for each turn slower than its threshold, saying
// where the time went, so that a tail latency can be told apart: waiting
// for the first activity (task hand-off, pollers), or between the last
// activity's end and the workflow's close (the second workflow task) and
// between the close and the driver's Get returning (the history long poll).
type slowLog struct {
	over time.Duration
	mu   sync.Mutex
	w    io.Writer
}

// note describes turn o if it was slow; it asks the server when the
// workflow closed, which only slow turns pay for.
func (s *slowLog) note(ctx context.Context, c client.Client, o *turnObs, id string) {
	if s == nil || s.w == nil || o.done.IsZero() || o.done.Sub(o.t0) < s.over || len(o.results) == 0 {
		return
	}
	first, last := o.results[0].StartedAt, o.results[0].FinishAt
	for _, r := range o.results {
		first, last = min(first, r.StartedAt), max(last, r.FinishAt)
	}
	actEnd := time.Unix(0, last)
	closed := "?"
	if d, err := c.DescribeWorkflowExecution(ctx, id, ""); err == nil && d.WorkflowExecutionInfo.GetCloseTime() != nil {
		at := d.WorkflowExecutionInfo.GetCloseTime().AsTime()
		closed = fmt.Sprintf("%.1f ms, close → result %.1f ms", msOf(at.Sub(actEnd)), msOf(o.done.Sub(at)))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, "slow turn %s: %.1f ms: start → first activity %.1f ms, last activity end → close %s\n",
		o.turn, msOf(o.done.Sub(o.t0)), msOf(time.Unix(0, first).Sub(o.t0)), closed)
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
