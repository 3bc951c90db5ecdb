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
	last                             time.Time // when the last result or turn_done arrived
}

func newTally(maxConc int) *tally {
	h := func() *hdrhistogram.Histogram { return hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3) }
	return &tally{maxConc: maxConc, e2e: h(), overhead: h(), firstResult: h(), turn: h()}
}

func micros(d time.Duration) int64 { return max(d.Microseconds(), 0) }

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
		if d.seq >= 0 && d.seq < len(o.pubAt) && !o.pubAt[d.seq].IsZero() {
			e2e := d.at.Sub(o.pubAt[d.seq])
			_ = t.e2e.RecordValue(micros(e2e))
			_ = t.overhead.RecordValue(micros(e2e - d.finish.Sub(d.start)))
		}
		if k == 0 && !first.IsZero() {
			_ = t.firstResult.RecordValue(micros(d.at.Sub(first)))
		}
		if d.at.After(t.last) {
			t.last = d.at
		}
	}
	if !o.doneAt.IsZero() && !first.IsZero() {
		_ = t.turn.RecordValue(micros(o.doneAt.Sub(first)))
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

func ms(h *hdrhistogram.Histogram, q float64) float64 {
	if h.TotalCount() == 0 {
		return 0
	}
	return float64(h.ValueAtQuantile(q)) / 1000
}

// report fills in the figures of a run that started at start.
func (t *tally) report(start time.Time) *Report {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &Report{
		Calls: t.calls, Turns: t.turns,
		E2E: Spread{P50: ms(t.e2e, 50), P90: ms(t.e2e, 90), P99: ms(t.e2e, 99), P999: ms(t.e2e, 99.9),
			Max: float64(t.e2e.Max()) / 1000},
		Overhead:    P50P99{ms(t.overhead, 50), ms(t.overhead, 99)},
		FirstResult: P50P99{ms(t.firstResult, 50), ms(t.firstResult, 99)},
		Turn:        P50P99{ms(t.turn, 50), ms(t.turn, 99)},
		Lost:        t.lost, Duplicates: t.dups, OrderViolations: t.order, ConcurrencyViolations: t.concurrency,
		Errors: t.errors,
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
