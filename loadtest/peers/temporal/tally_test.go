package main

import (
	"testing"
	"time"
)

// obs is a turn of n calls, all safe unless unsafe says, answered by
// results of the given seqs, each running 1 ms from a start of its own.
func obs(n int, unsafe map[int]bool, seqs ...int) *turnObs {
	o := &turnObs{turn: "t", safe: make([]bool, n), started: true}
	for i := range o.safe {
		o.safe[i] = !unsafe[i]
	}
	base := time.Unix(1000, 0)
	o.t0 = base
	o.done = base.Add(time.Second)
	for _, s := range seqs {
		start := base.Add(time.Duration(s) * 10 * time.Millisecond)
		o.results = append(o.results, CallResult{Turn: "t", Seq: s,
			StartedAt: start.UnixNano(), FinishAt: start.Add(time.Millisecond).UnixNano()})
	}
	return o
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    *turnObs
		want verdict
	}{
		{"all answered in order", obs(3, nil, 0, 1, 2), verdict{published: 3}},
		{"one lost", obs(3, nil, 0, 2), verdict{published: 3, lost: 1, order: 1}},
		{"a duplicate", obs(2, nil, 0, 0, 1), verdict{published: 2, duplicates: 1}},
		{"out of order", obs(3, nil, 1, 0, 2), verdict{published: 3, order: 1}},
		{"not started", &turnObs{turn: "t", safe: []bool{true}}, verdict{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := check(tc.o, 10); got != tc.want {
				t.Errorf("check = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestCheckOtherTurnIsNotAResult(t *testing.T) {
	o := obs(2, nil, 0, 1)
	o.results[1].Turn = "other"
	if v := check(o, 10); v.lost != 1 {
		t.Errorf("a result of another turn counted as this turn's: %+v", v)
	}
}

func TestCheckStartRule(t *testing.T) {
	// Call 1 is unsafe but overlaps call 0: against the rule.
	o := obs(2, map[int]bool{1: true}, 0, 1)
	o.results[1].StartedAt = o.results[0].StartedAt
	if v := check(o, 10); !v.concurrency {
		t.Errorf("an unsafe call overlapping an earlier one passed: %+v", v)
	}
	// Three safe calls at once under a limit of 2: against the rule.
	o = obs(3, nil, 0, 1, 2)
	for i := range o.results {
		o.results[i].StartedAt, o.results[i].FinishAt = o.results[0].StartedAt, o.results[0].FinishAt
	}
	if v := check(o, 2); !v.concurrency {
		t.Errorf("three calls at once under a limit of 2 passed: %+v", v)
	}
	if v := check(o, 3); v.concurrency {
		t.Errorf("three calls at once under a limit of 3 failed: %+v", v)
	}
}

func TestTallyReport(t *testing.T) {
	tl := newTally(10)
	tl.add(obs(2, nil, 0, 1))
	tl.add(obs(1, nil, 0))
	r := tl.report(time.Unix(1000, 0))
	if r.Calls != 3 || r.Turns != 2 || r.Failed() {
		t.Fatalf("report = %+v", r)
	}
	// Results come back together: every call's e2e is the turn's.
	if r.E2E.P50 != r.Turn.P50 || r.FirstResult.P50 != r.Turn.P50 || r.E2E.Max < 999 || r.E2E.Max > 1001 {
		t.Errorf("e2e %+v, first result %+v, turn %+v: want all 1000 ms", r.E2E, r.FirstResult, r.Turn)
	}
	if r.Overhead.P50 >= r.E2E.P50 {
		t.Errorf("overhead %+v not below e2e %+v by the tool's 1 ms", r.Overhead, r.E2E)
	}
	if r.DurationS != 1 || r.CallsPerS != 3 {
		t.Errorf("duration %g s, %g calls/s: want 1 s, 3 calls/s", r.DurationS, r.CallsPerS)
	}
}

func TestDrawTurn(t *testing.T) {
	c, err := Config{CallsPerTurn: rangeOf(2, 5), SafeShare: 1, Duration: time.Second}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	for k := range uint64(50) {
		s := drawTurn(c, k)
		if len(s) < 2 || len(s) > 5 {
			t.Fatalf("turn %d has %d calls, want 2..5", k, len(s))
		}
		for i, safe := range s {
			if !safe {
				t.Fatalf("turn %d call %d unsafe under a safe share of 1", k, i)
			}
		}
		if again := drawTurn(c, k); len(again) != len(s) {
			t.Fatalf("turn %d drawn twice differs", k)
		}
	}
}
