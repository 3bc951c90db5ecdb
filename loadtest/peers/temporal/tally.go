package main

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/toolwire/toolwire/internal/refsched"
	"github.com/toolwire/toolwire/loadtest"
)

// turnObs is what one turn observed.
type turnObs struct {
	turn string
	safe []bool
	// started: the workflow was started, so its calls count as published.
	started bool
	// t0 is when the start was sent; done when the result came back (zero:
	// it never did).
	t0, done time.Time
	// results as the workflow returned them.
	results []CallResult
	err     error
}

// verdict is what the checks found in one turn.
type verdict struct {
	published, lost, duplicates, order int
	concurrency                        bool
}

// check holds one turn's results to synth's contract: each call answered
// once (lost, duplicates), no result ahead of an earlier call's (order),
// and the activities' spans obeying the start rule under maxConc
// (concurrency, on the longest prefix of calls that all have a result).
// A result naming another turn is not this turn's.
func check(o *turnObs, maxConc int) verdict {
	var v verdict
	if !o.started {
		return v
	}
	v.published = len(o.safe)
	seen := make(map[int]CallResult, len(o.results))
	for _, r := range o.results {
		if r.Turn != o.turn || r.Seq < 0 || r.Seq >= len(o.safe) {
			continue
		}
		if _, dup := seen[r.Seq]; dup {
			v.duplicates++
			continue
		}
		if r.Seq > len(seen) {
			v.order++
		}
		seen[r.Seq] = r
	}
	v.lost = len(o.safe) - len(seen)
	var spans []refsched.Span
	for i := range o.safe {
		r, ok := seen[i]
		if !ok {
			break
		}
		spans = append(spans, refsched.Span{Start: time.Unix(0, r.StartedAt), End: time.Unix(0, r.FinishAt)})
	}
	if len(spans) > 0 && refsched.Check(o.safe[:len(spans)], spans, maxConc) != nil {
		v.concurrency = true
	}
	return v
}

// tally gathers the turns' observations as they end.
type tally struct {
	mu                               sync.Mutex
	maxConc                          int
	calls, results, turns, errors    int
	lost, dups, order, concurrency   int
	e2e, overhead, firstResult, turn *hdrhistogram.Histogram
	last                             time.Time // when the last result arrived
}

func newTally(maxConc int) *tally {
	// As synth's figures are made.
	h := loadtest.NewHistogram
	return &tally{maxConc: maxConc, e2e: h(), overhead: h(), firstResult: h(), turn: h()}
}

// add counts one turn. A workflow returns its results together, so every
// call's e2e, the turn's first result and the turn itself all end when the
// result came back.
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
	if o.done.IsZero() {
		return
	}
	e2e := o.done.Sub(o.t0)
	for _, r := range o.results {
		t.results++
		_ = t.e2e.RecordValue(loadtest.Micros(e2e))
		_ = t.overhead.RecordValue(loadtest.Micros(e2e - time.Duration(r.FinishAt-r.StartedAt)))
	}
	if len(o.results) > 0 {
		_ = t.firstResult.RecordValue(loadtest.Micros(e2e))
	}
	_ = t.turn.RecordValue(loadtest.Micros(e2e))
	if o.done.After(t.last) {
		t.last = o.done
	}
}

// progress is the count of results so far.
func (t *tally) progress() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.results
}

// report fills in the figures of a run that started at start, in synth's
// Report. There are no stages, so stage_msgs_per_call is 0, and no
// baseline, so its figures are 0.
func (t *tally) report(start time.Time) *loadtest.Report {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &loadtest.Report{
		Calls: t.calls, Turns: t.turns,
		E2E: loadtest.SpreadOf(t.e2e), Overhead: loadtest.P50P99Of(t.overhead),
		FirstResult: loadtest.P50P99Of(t.firstResult), Turn: loadtest.P50P99Of(t.turn),
		Lost: t.lost, Duplicates: t.dups, OrderViolations: t.order, ConcurrencyViolations: t.concurrency,
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
