package main

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/toolwire/toolwire/loadtest"
)

// delivery is a result as the agent gets it: which call it says it answers
// and when it arrived.
type delivery struct {
	seq int
	at  time.Time
}

// turnObs is what one turn saw: its start (every call of it is sent then),
// its results in the order the agent takes them, and the error that cut it
// short, if any.
type turnObs struct {
	calls      int
	start      time.Time
	deliveries []delivery
	err        error
}

// verdict is a turn's checks.
type verdict struct {
	valid, lost, duplicates, order, foreign int
}

// check counts, as toolwire's load test does: a second result for a call
// already answered (duplicate), a result taken while an earlier call's was
// not (order violation), a result for no call of the turn (foreign, an
// error), and calls left without a result (lost).
func check(o *turnObs) verdict {
	var v verdict
	seen := make([]bool, o.calls)
	lowest := 0 // lowest call not answered yet
	for _, d := range o.deliveries {
		switch {
		case d.seq < 0 || d.seq >= o.calls:
			v.foreign++
			continue
		case seen[d.seq]:
			v.duplicates++
			continue
		}
		if d.seq > lowest {
			v.order++
		}
		seen[d.seq] = true
		v.valid++
		for lowest < o.calls && seen[lowest] {
			lowest++
		}
	}
	v.lost = o.calls - v.valid
	return v
}

// tally gathers the turns' observations as they end.
type tally struct {
	mu                           sync.Mutex
	calls, results, turns, errs  int
	lost, dups, order            int
	e2e, firstResult, turnLength *hdrhistogram.Histogram
	last                         time.Time // when the last result arrived
}

func newTally() *tally {
	h := loadtest.NewHistogram
	return &tally{e2e: h(), firstResult: h(), turnLength: h()}
}

// add counts one turn. e2e is per result from the turn's start, when all
// its calls were sent; first result and turn are recorded only for a turn
// with every result in (a lost call has neither).
func (t *tally) add(o *turnObs) {
	v := check(o)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.turns++
	t.calls += o.calls
	t.lost += v.lost
	t.dups += v.duplicates
	t.order += v.order
	t.errs += v.foreign
	if o.err != nil {
		t.errs++
	}
	var first, last time.Time
	for _, d := range o.deliveries {
		t.results++
		_ = t.e2e.RecordValue(loadtest.Micros(d.at.Sub(o.start)))
		if first.IsZero() || d.at.Before(first) {
			first = d.at
		}
		if d.at.After(last) {
			last = d.at
		}
	}
	if !first.IsZero() {
		_ = t.firstResult.RecordValue(loadtest.Micros(first.Sub(o.start)))
	}
	if v.lost == 0 && !last.IsZero() {
		_ = t.turnLength.RecordValue(loadtest.Micros(last.Sub(o.start)))
	}
	if last.After(t.last) {
		t.last = last
	}
}

// report fills in the figures of a run that started at start, in
// toolwire's report shape. Overhead is e2e: the tools are no-ops, with no
// run time to take off. Stage messages, concurrency violations and the
// baseline do not apply and stay 0.
func (t *tally) report(start time.Time) *loadtest.Report {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &loadtest.Report{
		Calls: t.calls, Turns: t.turns,
		E2E: loadtest.SpreadOf(t.e2e), Overhead: loadtest.P50P99Of(t.e2e),
		FirstResult: loadtest.P50P99Of(t.firstResult), Turn: loadtest.P50P99Of(t.turnLength),
		Lost: t.lost, Duplicates: t.dups, OrderViolations: t.order,
		Errors: t.errs,
	}
	end := t.last
	if end.Before(start) {
		end = time.Now()
	}
	if d := end.Sub(start); d > 0 {
		r.DurationS = d.Seconds()
		r.CallsPerS = float64(t.results) / d.Seconds()
	}
	return r
}
