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
// for every earlier call.
func CanStart(l *schemas.Lease, seq int) bool {
	if seq < 0 || seq >= len(l.Calls) || l.Calls[seq].State != schemas.CallReady {
		return false
	}
	safe := l.Calls[seq].Safe
	for j := 0; j < seq; j++ {
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
	if l.Total < 0 || len(l.Calls) < l.Total {
		return false
	}
	for i := 0; i < l.Total; i++ {
		if l.Calls[i].State != schemas.CallDone {
			return false
		}
	}
	return true
}
