// Package lease holds the per-turn lease: the start rule of
// docs/orchestration.md (When a call may start) as a pure function of the
// lease, and the compare-and-set store in the JetStream KV bucket that the
// router and the executors share.
//
// It is its own package, not part of executor as the first design had it,
// because the router writes the lease too (registration, turn end) and the
// reference scheduler's tests use the same rule.
package lease

import "github.com/toolwire/toolwire/schemas"

// DefaultMaxConcurrency is the per-turn limit of concurrently running calls.
const DefaultMaxConcurrency = 10

// Running counts the turn's running calls.
func Running(l *schemas.Lease) int {
	n := 0
	for i := range l.Calls {
		if l.Calls[i].State == schemas.CallRunning {
			n++
		}
	}
	return n
}

// CanStart reports whether call seq, already classified, may start now:
// every earlier call is classified; a safe call waits for every earlier
// unsafe call and for a free slot under MaxConcurrency; an unsafe call waits
// for every earlier call. A rejected call never starts (Settle ends it).
func CanStart(l *schemas.Lease, seq int) bool {
	i, ok := l.Index(seq)
	// i == seq: every earlier call has an entry.
	if !ok || i != seq || l.Calls[i].State != schemas.CallReady || l.Calls[i].Rejected {
		return false
	}
	safe := l.Calls[i].Safe
	for j := 0; j < i; j++ {
		c := &l.Calls[j]
		if c.State < schemas.CallReady {
			return false
		}
		if c.State == schemas.CallDone {
			continue
		}
		if !safe || !c.Safe {
			return false
		}
	}
	if !safe {
		// No later call can be running: a later call waits for this one.
		return true
	}
	max := l.MaxConcurrency
	if max <= 0 {
		max = DefaultMaxConcurrency
	}
	return Running(l) < max
}

// Complete reports whether the turn's end is known and every call is done.
func Complete(l *schemas.Lease) bool {
	if l.Total < 0 {
		return false
	}
	n := 0
	for i := range l.Calls {
		c := &l.Calls[i]
		if c.Seq >= l.Total {
			break
		}
		if c.State != schemas.CallDone {
			return false
		}
		n++
	}
	return n == l.Total
}

// Settle ends the rejected calls whose place in the turn has come: a
// rejected call counts as an unsafe call, so its failure takes effect once
// every earlier call is done, never before. Settling marks it done and,
// when its tool cancels its siblings, sets the turn's Abort from it (unless
// an earlier failure already did). Settling one call can settle the next,
// so the walk goes on in seq order. It reports whether it changed l.
//
// The store runs it on every write, so whichever write finishes a turn's
// earlier calls also settles the rejected call behind them.
func Settle(l *schemas.Lease) bool {
	changed := false
	for i := range l.Calls {
		c := &l.Calls[i]
		if c.Seq != i {
			// An earlier call has no entry yet.
			return changed
		}
		if c.State == schemas.CallDone {
			continue
		}
		if !c.Rejected || c.State != schemas.CallReady {
			return changed
		}
		c.State = schemas.CallDone
		if c.AbortText != "" && l.Abort == nil {
			l.Abort = &schemas.LeaseAbort{Seq: c.Seq, From: c.Seq, Text: c.AbortText}
		}
		changed = true
	}
	return changed
}
