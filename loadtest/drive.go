package loadtest

import (
	"context"
	"time"
)

// runTurn runs one turn on a target and reports what it observed.
type runTurn func(ctx context.Context, k uint64, spec turnSpec) *turnObs

// drive runs the workload of c through run: closed loop or open loop for
// c.Duration, then lets the turns in flight finish until the drain
// deadline, after which their missing results are lost. onTick, when set,
// is told of the elapsed time while the run goes on.
func drive(ctx context.Context, c Config, run runTurn, onTick func(elapsed time.Duration, results int)) *Report {
	// Turns get until the drain deadline; the loops stop starting turns at
	// the end of the duration.
	drain := 30*time.Second + c.StreamTime + time.Duration(c.CallsPerTurn.Max)*c.ServiceTime
	start := time.Now()
	t := newTally(c.MaxConcurrency, start, c.Plot != "")
	tctx, cancel := context.WithDeadline(ctx, start.Add(c.Duration+drain))
	defer cancel()
	stopTicking := ticker(start, onTick, t.progress)
	held := Loop(ctx, c.schedule(), start, func(k uint64) { t.add(run(tctx, k, makeTurn(c, k))) })
	stopTicking()
	t.held = held
	return t.report()
}

// pace waits until the turn's call i of n is due; false when ctx ended.
func pace(ctx context.Context, t0 time.Time, stream time.Duration, i, n int) bool {
	d := time.Until(t0.Add(offset(stream, i, n)))
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
