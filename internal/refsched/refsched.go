// Package refsched is the reference scheduler: a plain, sequential
// implementation of the start rule of docs/orchestration.md, in virtual
// time, and a checker of the rule's invariants on any timeline. The
// distributed pipeline is tested against it.
//
// A call the router rejects (unknown tool, invalid input, incomplete
// block) is, to the rule, an unsafe call that takes no time: it fails at
// its place in the turn, once every earlier call has finished, and every
// later call waits for it.
package refsched

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// Call is what the rule needs to know of a call.
type Call struct {
	Safe     bool
	Duration time.Duration
	// Rejected: the router answered the call without running it. It is
	// unsafe and takes no time, whatever Safe and Duration say.
	Rejected bool
}

// effective is the call as the rule sees it.
func (c Call) effective() Call {
	if c.Rejected {
		return Call{Rejected: true}
	}
	return c
}

// Span is when a call ran.
type Span struct {
	Start, End time.Time
}

// Batches is the greedy partition in call order: consecutive safe calls
// form one batch, each unsafe call is a batch of its own.
func Batches(safe []bool) [][]int {
	var out [][]int
	for i, s := range safe {
		if s && len(out) > 0 && safe[out[len(out)-1][0]] {
			out[len(out)-1] = append(out[len(out)-1], i)
			continue
		}
		out = append(out, []int{i})
	}
	return out
}

// Simulate runs calls under the rule in virtual time, all known at t0:
// each call starts at the first instant the rule allows. It is the oracle's
// schedule; it is sequential and deterministic.
func Simulate(calls []Call, maxConcurrency int, t0 time.Time) []Span {
	if maxConcurrency <= 0 {
		maxConcurrency = 1
	}
	n := len(calls)
	eff := make([]Call, n)
	for i, c := range calls {
		eff[i] = c.effective()
	}
	calls = eff
	spans := make([]Span, n)
	started := make([]bool, n)
	done := make([]bool, n)
	now := t0
	for {
		// Start everything the rule allows now, in call order.
		for i := 0; i < n; i++ {
			if started[i] || !canStart(calls, started, done, i, maxConcurrency) {
				continue
			}
			started[i] = true
			spans[i] = Span{Start: now, End: now.Add(calls[i].Duration)}
		}
		// Zero-length calls (rejections) finish the moment they start.
		progressed := false
		for i := 0; i < n; i++ {
			if started[i] && !done[i] && !spans[i].End.After(now) {
				done[i], progressed = true, true
			}
		}
		if progressed {
			continue
		}
		// Advance to the next finish.
		next := time.Time{}
		for i := 0; i < n; i++ {
			if started[i] && !done[i] && (next.IsZero() || spans[i].End.Before(next)) {
				next = spans[i].End
			}
		}
		if next.IsZero() {
			return spans
		}
		now = next
		for i := 0; i < n; i++ {
			if started[i] && !done[i] && !spans[i].End.After(now) {
				done[i] = true
			}
		}
	}
}

func canStart(calls []Call, started, done []bool, i, max int) bool {
	running := 0
	for j := range calls {
		if started[j] && !done[j] {
			running++
		}
	}
	for j := 0; j < i; j++ {
		if done[j] {
			continue
		}
		if !calls[i].Safe || !calls[j].Safe {
			return false
		}
	}
	if !calls[i].Safe {
		return running == 0
	}
	return running < max
}

// Violation is a broken invariant.
var Violation = errors.New("refsched: rule violated")

// Check verifies a timeline against the rule: no unsafe call overlaps
// another call, no call starts before an earlier unsafe call finished, no
// unsafe call starts before every earlier call finished, and at no instant
// do more than maxConcurrency calls run.
func Check(safe []bool, spans []Span, maxConcurrency int) error {
	if len(safe) != len(spans) {
		return fmt.Errorf("%w: %d calls but %d spans", Violation, len(safe), len(spans))
	}
	for i := range spans {
		if spans[i].End.Before(spans[i].Start) {
			return fmt.Errorf("%w: call %d ends before it starts", Violation, i)
		}
		for j := 0; j < i; j++ {
			// j precedes i in call order.
			if (!safe[i] || !safe[j]) && spans[i].Start.Before(spans[j].End) {
				return fmt.Errorf("%w: call %d (safe=%v) started at %s before call %d (safe=%v) ended at %s",
					Violation, i, safe[i], spans[i].Start.Format(time.RFC3339Nano), j, safe[j], spans[j].End.Format(time.RFC3339Nano))
			}
		}
	}
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, s := range spans {
		edges = append(edges, edge{s.Start, +1}, edge{s.End, -1})
	}
	// Ends before starts at the same instant: touching spans do not overlap.
	sort.Slice(edges, func(a, b int) bool {
		if !edges[a].at.Equal(edges[b].at) {
			return edges[a].at.Before(edges[b].at)
		}
		return edges[a].delta < edges[b].delta
	})
	running := 0
	for _, e := range edges {
		running += e.delta
		if running > maxConcurrency {
			return fmt.Errorf("%w: %d calls running at %s (max %d)", Violation, running, e.at.Format(time.RFC3339Nano), maxConcurrency)
		}
	}
	return nil
}

// ContextSeen is the reference of docs/orchestration.md (Context modifiers):
// for each call, how many context changes it runs with, and which call made
// the last of them (-1 for none). changed[j] says call j returned a change
// (and finished normally). An unsafe call's change applies when it finishes;
// the changes of a concurrent batch apply together when the batch ends, in
// seq order.
// A call runs with every change of the batches before its own.
func ContextSeen(safe, changed []bool) (versions, last []int) {
	versions = make([]int, len(safe))
	last = make([]int, len(safe))
	batches := Batches(safe)
	applied, lastBy := 0, -1
	for _, b := range batches {
		for _, i := range b {
			versions[i], last[i] = applied, lastBy
		}
		for _, i := range b {
			if changed[i] {
				applied++
				lastBy = i
			}
		}
	}
	return versions, last
}

// BatchStart is the first call of the concurrent batch holding call f: f
// itself when it is unsafe (or rejected: pass false for it in safe).
func BatchStart(safe []bool, f int) int {
	if !safe[f] {
		return f
	}
	lo := f
	for lo > 0 && safe[lo-1] {
		lo--
	}
	return lo
}

// Reach reports which calls the failure of call f may cancel when it
// cancels its siblings: those that could still be unfinished when it fails
// under the rule — the other members of its own concurrent batch and every
// later call. A call before f's batch had finished before f could start,
// and is never cancelled by it.
func Reach(safe []bool, f int) []bool {
	out := make([]bool, len(safe))
	for j := BatchStart(safe, f); j < len(safe); j++ {
		out[j] = j != f
	}
	return out
}

// MustWaitFor reports which calls cannot start before call f finishes: the
// later calls that are unsafe, every later call when f is unsafe, and every
// call after a later unsafe one. When f errors and cancels its siblings,
// none of these may run.
func MustWaitFor(safe []bool, f int) []bool {
	out := make([]bool, len(safe))
	barrier := !safe[f]
	for j := f + 1; j < len(safe); j++ {
		if !safe[j] {
			barrier = true
		}
		out[j] = barrier
	}
	return out
}
