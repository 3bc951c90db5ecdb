package lease

import (
	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/schemas"
)

// Halted says whether call seq, not started, must not start, and with what
// result. A discard outranks a sibling error, which outranks a user
// interrupt: the most specific reason is the one the model can act on. A
// sibling error reaches only the calls from its batch on (Aborts).
func Halted(l *schemas.Lease, seq int) (text string, ok bool) {
	switch {
	case l.Discarded:
		return texts.Discard, true
	case Aborts(l, seq):
		return l.Abort.Text, true
	case l.Cancelled:
		return texts.Interrupt, true
	}
	return "", false
}

// Aborts reports whether the turn's sibling error cancels call seq: every
// unfinished call from the failing call's concurrent batch on, but the
// failing call itself. A call before that batch had finished when the
// failure came, under the start rule, and the order the model wrote the
// calls in says the failure cannot undo it.
func Aborts(l *schemas.Lease, seq int) bool {
	return l.Abort != nil && seq != l.Abort.Seq && seq >= l.Abort.From
}

// Abort records the failure of call seq, of a tool that cancels its
// siblings, as the turn's Abort unless an earlier failure did; activity
// names the call. It reaches back to the start of the call's batch.
func Abort(l *schemas.Lease, seq int, activity string) {
	if l.Abort != nil {
		return
	}
	l.Abort = &schemas.LeaseAbort{Seq: seq, From: BatchStart(l, seq), Text: texts.Sibling(activity)}
}

// BatchStart is the first call of the concurrent batch holding call seq:
// seq itself for an unsafe call, else the first of the run of classified
// safe calls that ends at seq.
func BatchStart(l *schemas.Lease, seq int) int {
	i, ok := l.Index(seq)
	if !ok || !l.Calls[i].Safe {
		return seq
	}
	lo := seq
	for j := i - 1; j >= 0; j-- {
		c := &l.Calls[j]
		if c.Seq != lo-1 || c.State < schemas.CallReady || !c.Safe {
			break
		}
		lo = c.Seq
	}
	return lo
}

// StopRunning says whether a running call of a tool with the given
// interrupt behaviour must be stopped now, and with what result. A user
// interrupt stops only tools that allow it; a discard or a sibling error
// stops every call but the one that errored.
func StopRunning(l *schemas.Lease, seq int, interruptible bool) (text string, ok bool) {
	switch {
	case l.Discarded:
		return texts.Discard, true
	case Aborts(l, seq):
		return l.Abort.Text, true
	case l.Cancelled && interruptible:
		return texts.Interrupt, true
	}
	return "", false
}

// BatchOf is the index of the greedy batch call seq belongs to: consecutive
// safe calls form one batch, every other call a batch of its own. Every
// call up to seq must be classified.
func BatchOf(l *schemas.Lease, seq int) int {
	b := 0
	for i := 1; i < len(l.Calls) && l.Calls[i].Seq <= seq; i++ {
		if !(l.Calls[i].Safe && l.Calls[i-1].Safe) {
			b++
		}
	}
	return b
}

// ApplyClosedBatches applies the queued context changes of every concurrent
// batch that has finished, in seq order. A batch has finished when all its
// calls are done and it can grow no more: the call after it is classified
// (and so unsafe, or it would belong to the batch), or the turn ends with it.
// It reports whether it changed the lease.
func ApplyClosedBatches(l *schemas.Lease) bool {
	if len(l.Mods) == 0 {
		return false
	}
	var keep []schemas.ContextChange
	applied := false
	for _, m := range l.Mods {
		if batchClosed(l, m.Seq) {
			l.Apply(m)
			applied = true
			continue
		}
		keep = append(keep, m)
	}
	l.Mods = keep
	return applied
}

// batchClosed reports whether the safe batch holding call seq is over.
// Every call up to seq has an entry (it ran, so it was classified after
// every earlier call was).
func batchClosed(l *schemas.Lease, seq int) bool {
	i, ok := l.Index(seq)
	if !ok || i != seq {
		return false
	}
	for lo := i - 1; lo >= 0 && l.Calls[lo].Safe; lo-- {
		if l.Calls[lo].State != schemas.CallDone {
			return false
		}
	}
	for hi := i; ; hi++ {
		if l.Calls[hi].State != schemas.CallDone {
			return false
		}
		next := hi + 1
		if l.Total >= 0 && next >= l.Total {
			return true
		}
		// next == its seq: the entries are dense up to here.
		if next >= len(l.Calls) || l.Calls[next].Seq != next || l.Calls[next].State < schemas.CallReady {
			return false
		}
		if !l.Calls[next].Safe {
			return true
		}
	}
}

// QueueChange records a call's context change: an unsafe call's applies at
// once (it ran alone), a safe call's waits for the end of its batch.
func QueueChange(l *schemas.Lease, c schemas.ContextChange, safe bool) {
	if !safe {
		l.Apply(c)
		return
	}
	l.Mods = append(l.Mods, c)
	sortMods(l.Mods)
}

func sortMods(m []schemas.ContextChange) {
	for i := 1; i < len(m); i++ {
		for j := i; j > 0 && m[j].Seq < m[j-1].Seq; j-- {
			m[j], m[j-1] = m[j-1], m[j]
		}
	}
}
