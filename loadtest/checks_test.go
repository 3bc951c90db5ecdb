package loadtest

import (
	"testing"
	"time"
)

// hand builds a turn of n calls, all published, with deliveries given as
// (seq, start ms, end ms).
func hand(safe []bool, ds ...[3]int) *turnObs {
	t0 := time.Unix(1000, 0)
	o := &turnObs{spec: turnSpec{safe: safe}, pubAt: make([]time.Time, len(safe))}
	for i := range o.pubAt {
		o.pubAt[i] = t0
	}
	for k, d := range ds {
		at := t0.Add(time.Duration(100+k) * time.Millisecond)
		o.deliveries = append(o.deliveries, delivery{seq: d[0], at: at,
			start: t0.Add(time.Duration(d[1]) * time.Millisecond), finish: t0.Add(time.Duration(d[2]) * time.Millisecond)})
	}
	return o
}

func TestCheckPassesAGoodTurn(t *testing.T) {
	o := hand([]bool{true, true, false, true}, [3]int{0, 0, 10}, [3]int{1, 0, 12}, [3]int{2, 12, 20}, [3]int{3, 20, 25})
	if v := check(o, 10); v != (verdict{published: 4}) {
		t.Fatalf("good turn: %+v", v)
	}
}

func TestCheckFindsViolations(t *testing.T) {
	for name, c := range map[string]struct {
		o    *turnObs
		max  int
		want verdict
	}{
		"out of order": {hand([]bool{true, true}, [3]int{1, 0, 5}, [3]int{0, 0, 5}), 10,
			verdict{published: 2, order: 1}},
		"duplicate": {hand([]bool{true, true}, [3]int{0, 0, 5}, [3]int{0, 0, 5}, [3]int{1, 0, 5}), 10,
			verdict{published: 2, duplicates: 1}},
		"lost": {hand([]bool{true, true, true}, [3]int{0, 0, 5}, [3]int{2, 0, 5}), 10,
			verdict{published: 3, lost: 1, order: 1}},
		"unsafe overlaps": {hand([]bool{true, false}, [3]int{0, 0, 10}, [3]int{1, 5, 15}), 10,
			verdict{published: 2, concurrency: true}},
		"over the limit": {hand([]bool{true, true, true}, [3]int{0, 0, 10}, [3]int{1, 0, 10}, [3]int{2, 0, 10}), 2,
			verdict{published: 3, concurrency: true}},
	} {
		if got := check(c.o, c.max); got != c.want {
			t.Errorf("%s: got %+v, want %+v", name, got, c.want)
		}
	}
}

// The tally counts what check finds.
func TestTallyCountsViolations(t *testing.T) {
	tl := newTally(10, time.Unix(1000, 0), false)
	tl.add(hand([]bool{true, false}, [3]int{1, 5, 15}, [3]int{0, 0, 10}))
	r := tl.report()
	if r.OrderViolations != 1 || r.ConcurrencyViolations != 1 || !r.Failed() {
		t.Fatalf("report %+v", r)
	}
}
