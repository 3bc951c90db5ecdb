package loadtest

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// tally gathers the turns' observations as they end.
type tally struct {
	mu                               sync.Mutex
	maxConc                          int
	calls, results, turns, errors    int
	lost, dups, order, concurrency   int
	e2e, overhead, firstResult, turn *hdrhistogram.Histogram
	start                            time.Time // the run's start, that the figures count from
	last                             time.Time // when the last result or turn_done arrived
	held                             Held      // what the open loop's bound did
	// series is the results over time, kept only for charts (nil without).
	series *series
}

// newTally starts the tally of a run that started at start; withSeries
// also keeps the results over time for the charts.
func newTally(maxConc int, start time.Time, withSeries bool) *tally {
	h := NewHistogram
	t := &tally{maxConc: maxConc, e2e: h(), overhead: h(), firstResult: h(), turn: h(), start: start}
	if withSeries {
		t.series = newSeries(start)
	}
	return t
}

// add counts one turn.
func (t *tally) add(o *turnObs) {
	v := check(o, t.maxConc)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.turns++
	t.calls += v.published
	t.lost += v.lost
	t.dups += v.duplicates
	t.order += v.order
	if v.concurrency {
		t.concurrency++
	}
	if o.err != nil {
		t.errors++
	}
	var first time.Time
	for _, t0 := range o.pubAt {
		if !t0.IsZero() && (first.IsZero() || t0.Before(first)) {
			first = t0
		}
	}
	for k, d := range o.deliveries {
		t.results++
		if d.isError {
			t.errors++
		}
		e2eUS := int64(-1)
		if d.seq >= 0 && d.seq < len(o.pubAt) && !o.pubAt[d.seq].IsZero() {
			e2e := d.at.Sub(o.pubAt[d.seq])
			e2eUS = Micros(e2e)
			_ = t.e2e.RecordValue(e2eUS)
			_ = t.overhead.RecordValue(Micros(e2e - d.finish.Sub(d.start)))
		}
		if t.series != nil {
			t.series.add(d.at, e2eUS)
		}
		if k == 0 && !first.IsZero() {
			_ = t.firstResult.RecordValue(Micros(d.at.Sub(first)))
		}
		if d.at.After(t.last) {
			t.last = d.at
		}
	}
	if !o.doneAt.IsZero() && !first.IsZero() {
		_ = t.turn.RecordValue(Micros(o.doneAt.Sub(first)))
		if o.doneAt.After(t.last) {
			t.last = o.doneAt
		}
	}
}

// progress is the count of results so far.
func (t *tally) progress() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.results
}

// report fills in the figures of the run.
func (t *tally) report() *Report {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &Report{
		Calls: t.calls, Turns: t.turns,
		E2E: SpreadOf(t.e2e), Overhead: P50P99Of(t.overhead), FirstResult: P50P99Of(t.firstResult), Turn: P50P99Of(t.turn),
		Lost: t.lost, Duplicates: t.dups, OrderViolations: t.order, ConcurrencyViolations: t.concurrency,
		Errors: t.errors, HeldBack: t.held.Turns, HeldBackMax: t.held.Max,
	}
	if t.series != nil {
		// The tally is done: the charts may have the series itself.
		r.plot = &plotData{e2e: t.e2e.Clone(), series: t.series}
	}
	end := t.last
	if end.Before(t.start) {
		end = time.Now()
	}
	if d := end.Sub(t.start); d > 0 {
		r.DurationS = d.Seconds()
		r.CallsPerS = float64(t.results) / d.Seconds()
	}
	return r
}
