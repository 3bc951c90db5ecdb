package loadtest

import (
	"context"
	"sync"
	"sync/atomic"
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
	stopAt := start.Add(c.Duration)
	var next atomic.Uint64
	var wg sync.WaitGroup
	one := func() {
		k := next.Add(1)
		o := run(tctx, k, makeTurn(c, k))
		t.add(o)
	}
	stopTicking := ticker(start, onTick, t.progress)
	if c.Rate > 0 {
		// Open loop: turn k starts at start + k·interval, whatever the
		// pipeline's pace; a late loop catches up at once. Only the bound
		// on turns in flight holds a turn back: then the producer is slowed.
		interval := time.Duration(float64(time.Second) * c.CallsPerTurn.mean() / c.Rate)
		slots := make(chan struct{}, c.MaxInFlight)
		timer := time.NewTimer(0)
		for k := 0; ; k++ {
			at := start.Add(time.Duration(k) * interval)
			if !at.Before(stopAt) {
				break
			}
			if d := time.Until(at); d > 0 {
				timer.Reset(d)
				select {
				case <-timer.C:
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				break
			}
			if ctx.Err() != nil || !takeSlot(ctx, slots, t, at, stopAt) {
				break
			}
			wg.Go(func() {
				defer func() { <-slots }()
				one()
			})
		}
		timer.Stop()
	} else {
		for range c.Concurrency {
			wg.Go(func() {
				for time.Now().Before(stopAt) && ctx.Err() == nil {
					one()
				}
			})
		}
	}
	wg.Wait()
	stopTicking()
	return t.report()
}

// takeSlot takes one of the open loop's slots for the turn due at at,
// waiting when every slot is taken (the turn is then counted as held
// back); false when ctx ended or the run's duration passed meanwhile, and
// the turn is not started.
func takeSlot(ctx context.Context, slots chan struct{}, t *tally, at, stopAt time.Time) bool {
	select {
	case slots <- struct{}{}:
		return true
	default:
	}
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	if !time.Now().Before(stopAt) {
		<-slots
		return false
	}
	t.heldBack(time.Since(at))
	return true
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
