package loadtest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Schedule is how a load test starts its turns, for synth and for the
// peers' drivers alike: a closed loop of Concurrency turns in flight, each
// followed by the next as soon as it ends, or an open loop of Rate calls
// per second, as turns of MeanCalls calls at even intervals whatever the
// target's pace, at most MaxInFlight at once. Turns start for Duration.
type Schedule struct {
	Concurrency int
	Rate        float64
	MeanCalls   float64
	// MaxInFlight bounds the open loop (0: DefaultMaxInFlight): a turn
	// due beyond it waits for one to end, so a target that cannot keep up
	// slows the producer down instead of its backlog growing.
	MaxInFlight int
	Duration    time.Duration
}

// Check reports the first setting of s that cannot work, naming it as its
// flag, and makes a schedule with neither loop a closed loop of one turn.
func (s *Schedule) Check() error {
	bad := func(f, format string, a ...any) error {
		return &ConfigError{Field: f, Msg: fmt.Sprintf(format, a...)}
	}
	switch {
	case s.Concurrency < 0:
		return bad("concurrency", "must be positive, got %d", s.Concurrency)
	case s.Rate < 0:
		return bad("rate", "must be positive, got %g", s.Rate)
	case s.Concurrency > 0 && s.Rate > 0:
		return bad("rate", "give either --concurrency (closed loop) or --rate (open loop), not both")
	case s.Concurrency == 0 && s.Rate == 0:
		s.Concurrency = 1
	}
	if s.Duration <= 0 {
		return bad("duration", "must be positive, got %s", s.Duration)
	}
	if s.MaxInFlight < 0 {
		return bad("max-in-flight", "must be positive, got %d", s.MaxInFlight)
	}
	return nil
}

// Held is what an open loop's bound did: how many turns started late, and
// the latest start.
type Held struct {
	Turns int
	Max   time.Duration
}

// Loop runs turn(k) for k = 1, 2, … from start as s says, and returns once
// every turn it started has returned. It starts no turn once ctx has ended
// or s.Duration has passed; a turn still held back by the bound then is not
// started.
func Loop(ctx context.Context, s Schedule, start time.Time, turn func(k uint64)) Held {
	stopAt := start.Add(s.Duration)
	var next atomic.Uint64
	var wg sync.WaitGroup
	var held Held
	if s.Rate <= 0 {
		for range s.Concurrency {
			wg.Go(func() {
				for time.Now().Before(stopAt) && ctx.Err() == nil {
					turn(next.Add(1))
				}
			})
		}
		wg.Wait()
		return held
	}
	// Turn k is due at start + k·interval; a late loop catches up at once.
	interval := time.Duration(float64(time.Second) * s.MeanCalls / s.Rate)
	bound := s.MaxInFlight
	if bound <= 0 {
		bound = DefaultMaxInFlight
	}
	slots := make(chan struct{}, bound)
	timer := time.NewTimer(0)
	defer timer.Stop()
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
		if ctx.Err() != nil || !takeSlot(ctx, slots, &held, at, stopAt) {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			turn(next.Add(1))
		})
	}
	wg.Wait()
	return held
}

// takeSlot takes one of the open loop's slots for the turn due at at,
// waiting when every slot is taken (the turn is then counted in held);
// false when ctx ended or the run's duration passed meanwhile, and the
// turn is not started.
func takeSlot(ctx context.Context, slots chan struct{}, held *Held, at, stopAt time.Time) bool {
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
	held.Turns++
	held.Max = max(held.Max, time.Since(at))
	return true
}
