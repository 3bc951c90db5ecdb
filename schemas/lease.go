package schemas

import (
	"fmt"
	"slices"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// CallState is where a call is in its life, as recorded in the turn's lease.
type CallState uint8

// Call states, in the only order a call moves through them.
const (
	// CallUnknown: the call's slot exists but the call has not been routed.
	CallUnknown CallState = iota
	// CallRouted: dispatched to a pool; its safe flag is not known yet.
	CallRouted
	// CallReady: classified (safe flag known), waiting for the start rule.
	CallReady
	// CallRunning: started by a worker, which renews Deadline while it runs.
	CallRunning
	// CallDone: its result is published.
	CallDone
)

// String names the state as it appears in logs.
func (s CallState) String() string {
	switch s {
	case CallUnknown:
		return "unknown"
	case CallRouted:
		return "routed"
	case CallReady:
		return "ready"
	case CallRunning:
		return "running"
	case CallDone:
		return "done"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// LeaseCall is one call's entry in a turn's lease.
type LeaseCall struct {
	// Seq is the call's position in its turn.
	Seq   int       `msgpack:"q"`
	State CallState `msgpack:"s"`
	Safe  bool      `msgpack:"f,omitempty"`
	// ReadOnly calls may run again after a worker died; others may not.
	ReadOnly bool   `msgpack:"r,omitempty"`
	Tool     string `msgpack:"t,omitempty"`
	Pool     string `msgpack:"p,omitempty"`
	Worker   string `msgpack:"w,omitempty"`
	// Deadline (Unix ms) of a running call: past it the worker counts as dead.
	Deadline int64 `msgpack:"d,omitempty"`
	Attempts int   `msgpack:"a,omitempty"`
	// Rejected marks a call the router answered without dispatching it
	// (unknown tool, invalid input, incomplete block). It counts as an
	// unsafe call that fails at its place in the turn: it stays ready until
	// every earlier call is done, and is then marked done (lease.Settle).
	Rejected bool `msgpack:"x,omitempty"`
	// AbortText is the sibling-cancel text a rejected call sets as the
	// turn's Abort when it settles, for a tool that cancels its siblings.
	AbortText string `msgpack:"at,omitempty"`
}

// Lease is a turn's shared state: the only state the stages share besides
// the streams. It changes only by compare-and-set on its KV revision.
type Lease struct {
	// Version counts the writes of the lease. A reader that was told of a
	// write (by a core-NATS notification, which can arrive before the write
	// is readable) knows its read is stale while Version is below it.
	Version        uint64 `msgpack:"v"`
	MaxConcurrency int    `msgpack:"m"`
	// Total is the number of calls once turn_end is seen, -1 before.
	Total int `msgpack:"n"`
	// Calls are the entries of the calls that exist, sorted by Seq: a
	// lease's size follows the calls a turn has, not its largest seq.
	Calls []LeaseCall `msgpack:"c"`
	// Context is the turn context calls run with.
	WorkDir        string `msgpack:"wd,omitempty"`
	PermissionMode string `msgpack:"pm,omitempty"`
	ContextVersion int64  `msgpack:"cv,omitempty"`
	// Created is when the lease was made (Unix ms), for age and debugging.
	Created int64 `msgpack:"ct,omitempty"`

	// Abort is set by the first call whose error cancels its siblings.
	Abort *LeaseAbort `msgpack:"ab,omitempty"`
	// Cancelled is set by a user interrupt (turn_cancel).
	Cancelled bool `msgpack:"cx,omitempty"`
	// Discarded is set by turn_discard: the stream failed and will be retried.
	Discarded bool `msgpack:"dx,omitempty"`
	// Mods are the context changes of safe calls, queued until their
	// concurrent batch has finished.
	Mods []ContextChange `msgpack:"md,omitempty"`
	// Chars counts the result characters of the turn so far (the turn cap).
	Chars int64 `msgpack:"ch,omitempty"`
}

// LeaseAbort records why a turn's unfinished calls are cancelled.
type LeaseAbort struct {
	// Seq is the call that failed.
	Seq int `msgpack:"s"`
	// From is the first call the abort reaches: the start of the failing
	// call's concurrent batch. Calls before it had finished when it failed
	// (under the start rule) and are never cancelled by it.
	From int    `msgpack:"f,omitempty"`
	Text string `msgpack:"t"`
}

// ContextChange is a change a call makes to its turn's context; nil fields
// stay as they are.
type ContextChange struct {
	// Seq is the call that made the change.
	Seq            int     `msgpack:"s" json:"seq"`
	WorkDir        *string `msgpack:"wd,omitempty" json:"work_dir,omitempty"`
	PermissionMode *string `msgpack:"pm,omitempty" json:"permission_mode,omitempty"`
}

// Apply changes the lease's context by c and counts a new context version.
func (l *Lease) Apply(c ContextChange) {
	if c.WorkDir != nil {
		l.WorkDir = *c.WorkDir
	}
	if c.PermissionMode != nil {
		l.PermissionMode = *c.PermissionMode
	}
	l.ContextVersion++
}

// NewLease returns the lease of a turn that has just been seen.
func NewLease(maxConcurrency int, now time.Time) *Lease {
	return &Lease{MaxConcurrency: maxConcurrency, Total: -1, Created: now.UnixMilli()}
}

// Clone returns a copy of l that shares nothing a mutation could reach.
func (l *Lease) Clone() *Lease {
	c := *l
	c.Calls = slices.Clone(l.Calls)
	if l.Abort != nil {
		a := *l.Abort
		c.Abort = &a
	}
	if l.Mods != nil {
		c.Mods = make([]ContextChange, len(l.Mods))
		for i, m := range l.Mods {
			if m.WorkDir != nil {
				wd := *m.WorkDir
				m.WorkDir = &wd
			}
			if m.PermissionMode != nil {
				pm := *m.PermissionMode
				m.PermissionMode = &pm
			}
			c.Mods[i] = m
		}
	}
	return &c
}

// Call returns the entry of call seq, adding it (unknown) when the lease
// has none. The pointer is good until the next Call adds an entry.
func (l *Lease) Call(seq int) *LeaseCall {
	i, ok := l.find(seq)
	if !ok {
		l.Calls = slices.Insert(l.Calls, i, LeaseCall{Seq: seq})
	}
	return &l.Calls[i]
}

// Peek returns the entry of call seq, or nil when the lease has none.
func (l *Lease) Peek(seq int) *LeaseCall {
	if i, ok := l.find(seq); ok {
		return &l.Calls[i]
	}
	return nil
}

// Index is the position of call seq's entry in Calls; ok is false when the
// lease has none. Every call before seq has an entry exactly when the
// index equals seq, as seqs are unique and sorted.
func (l *Lease) Index(seq int) (i int, ok bool) { return l.find(seq) }

// Seen is one past the highest seq with an entry: the calls seen so far
// when a turn is closed without its end (0 for none).
func (l *Lease) Seen() int {
	if len(l.Calls) == 0 {
		return 0
	}
	return l.Calls[len(l.Calls)-1].Seq + 1
}

func (l *Lease) find(seq int) (int, bool) {
	// Entries usually arrive in order and are dense: try the direct
	// position before searching.
	if seq >= 0 && seq < len(l.Calls) && l.Calls[seq].Seq == seq {
		return seq, true
	}
	return slices.BinarySearchFunc(l.Calls, seq, func(c LeaseCall, s int) int { return c.Seq - s })
}

// EncodeLease is the KV value of a lease.
func EncodeLease(l *Lease) ([]byte, error) { return msgpack.Marshal(l) }

// DecodeLease reads a KV value written by EncodeLease.
func DecodeLease(b []byte) (*Lease, error) {
	l := &Lease{}
	if err := msgpack.Unmarshal(b, l); err != nil {
		return nil, &FieldError{Field: "lease", Reason: "not a msgpack lease", Err: err}
	}
	if len(l.Calls) > 1 && l.Calls[1].Seq == 0 {
		// Written before entries carried their seq (a slot per seq, dense):
		// a slot's place is its seq.
		for i := range l.Calls {
			l.Calls[i].Seq = i
		}
	}
	for i := range l.Calls {
		if l.Calls[i].Seq < 0 || i > 0 && l.Calls[i].Seq <= l.Calls[i-1].Seq {
			return nil, &FieldError{Field: "lease.c", Reason: fmt.Sprintf("entry %d (seq %d) is out of seq order", i, l.Calls[i].Seq)}
		}
	}
	return l, nil
}

// LeaseVersion reads only the Version of an encoded lease, cheaply; ok is
// false when b is not a lease.
func LeaseVersion(b []byte) (v uint64, ok bool) {
	var l struct {
		Version uint64 `msgpack:"v"`
	}
	if err := msgpack.Unmarshal(b, &l); err != nil {
		return 0, false
	}
	return l.Version, true
}
