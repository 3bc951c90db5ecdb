package loadtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func runOK(t *testing.T, c Config) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := Run(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *r)
	if r.Calls == 0 || r.Turns == 0 || r.CallsPerS <= 0 {
		t.Fatalf("nothing ran: %+v", *r)
	}
	if r.Failed() || r.Errors > 0 {
		t.Fatalf("checks failed: lost %d, duplicates %d, order %d, concurrency %d, errors %d",
			r.Lost, r.Duplicates, r.OrderViolations, r.ConcurrencyViolations, r.Errors)
	}
	if r.E2E.P50 <= 0 || r.Turn.P50 <= 0 || r.FirstResult.P50 <= 0 || r.StageMsgsPerCall <= 0 {
		t.Errorf("figures missing: %+v", *r)
	}
	return r
}

func TestClosedLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 2 s load")
	}
	r := runOK(t, Config{Concurrency: 4, Duration: 2 * time.Second, CallsPerTurn: Range{3, 3}, SafeShare: 0.5, ServiceTime: time.Millisecond})
	if r.Calls != 3*r.Turns {
		t.Errorf("%d calls in %d turns of 3", r.Calls, r.Turns)
	}
	if r.Baseline != (Baseline{}) {
		t.Errorf("baseline without Baseline: %+v", r.Baseline)
	}
}

func TestOpenLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 2 s load")
	}
	r := runOK(t, Config{Rate: 50, Duration: 2 * time.Second, CallsPerTurn: Range{1, 3}, SafeShare: 0.7})
	// 50 calls/s over 2 s, in turns of 2 on average: about 50 turns.
	if r.Turns < 30 || r.Turns > 70 {
		t.Errorf("%d turns at 25 turns/s over 2 s", r.Turns)
	}
}

func TestStreamed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 2 s load")
	}
	r := runOK(t, Config{Concurrency: 2, Duration: 2 * time.Second, CallsPerTurn: Range{4, 4}, SafeShare: 0.5, StreamTime: 200 * time.Millisecond})
	// Calls arrive over 200 ms and turn_done comes after the stream's end.
	if r.Turn.P50 < 200 {
		t.Errorf("turn p50 %.1f ms, under the stream time", r.Turn.P50)
	}
}

func TestBaseline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two 1 s loads")
	}
	r := runOK(t, Config{Concurrency: 2, Duration: time.Second, CallsPerTurn: Range{3, 3}, SafeShare: 0.5, ServiceTime: 2 * time.Millisecond, Baseline: true, Hops: 200})
	b := r.Baseline
	if b.Hop.P50 <= 0 || b.Hop.P99 < b.Hop.P50 || b.InprocCallsPerS <= 0 || b.InprocTurn.P50 <= 0 {
		t.Fatalf("baseline %+v", b)
	}
	// Three 2 ms calls, some of them alone: an in-process turn takes at
	// least two service times.
	if b.InprocTurn.P50 < 4 {
		t.Errorf("in-process turn p50 %.2f ms", b.InprocTurn.P50)
	}
}

// TestOpenLoopHeldBack: an open loop far above what its turns allow keeps
// at most MaxInFlight turns running, counts the turns it started late, and
// starts none once its duration has passed.
func TestOpenLoopHeldBack(t *testing.T) {
	c, err := Config{Rate: 10000, Duration: 300 * time.Millisecond, MaxInFlight: 3}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	running, most, lateStarts := 0, 0, 0
	stopAt := time.Now().Add(c.Duration)
	run := func(ctx context.Context, k uint64, spec turnSpec) *turnObs {
		mu.Lock()
		running++
		most = max(most, running)
		if time.Now().After(stopAt.Add(20 * time.Millisecond)) {
			lateStarts++
		}
		mu.Unlock()
		time.Sleep(50 * time.Millisecond) // a slow pipeline
		mu.Lock()
		running--
		mu.Unlock()
		return &turnObs{spec: spec, err: errors.New("not run")}
	}
	r := drive(context.Background(), c, run, nil)
	if most != c.MaxInFlight {
		t.Errorf("at most %d turns ran at once, want %d", most, c.MaxInFlight)
	}
	// 300 ms at 50 ms a turn, three at a time: about 18 turns, of 3,000 due.
	if r.HeldBack == 0 || r.Turns > 40 {
		t.Errorf("%d turns, %d held back; want a few turns, the rest not started", r.Turns, r.HeldBack)
	}
	if lateStarts > 0 {
		t.Errorf("%d turns started after the duration", lateStarts)
	}
}
