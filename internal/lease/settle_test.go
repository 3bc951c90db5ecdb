package lease_test

import (
	"testing"

	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/schemas"
)

// sparse builds a lease holding only the given entries (any order).
func sparse(max int, calls ...schemas.LeaseCall) *schemas.Lease {
	l := &schemas.Lease{MaxConcurrency: max, Total: -1}
	for _, c := range calls {
		*l.Call(c.Seq) = c
	}
	return l
}

func entry(seq int, st schemas.CallState, safe bool) schemas.LeaseCall {
	return schemas.LeaseCall{Seq: seq, State: st, Safe: safe}
}

func rejected(seq int, abort string) schemas.LeaseCall {
	return schemas.LeaseCall{Seq: seq, State: schemas.CallReady, Rejected: true, AbortText: abort}
}

// TestCanStartSparse: a call whose earlier calls have no entry yet cannot
// start; a rejected call never starts, and holds back the calls after it
// like any unsafe call.
func TestCanStartSparse(t *testing.T) {
	cases := []struct {
		name string
		l    *schemas.Lease
		seq  int
		want bool
	}{
		{"gap before", sparse(10, entry(0, schemas.CallDone, true), entry(2, schemas.CallReady, true)), 2, false},
		{"no gap", sparse(10, entry(0, schemas.CallDone, true), entry(1, schemas.CallRunning, true), entry(2, schemas.CallReady, true)), 2, true},
		{"entries out of arrival order", sparse(10, entry(2, schemas.CallReady, true), entry(0, schemas.CallRunning, true), entry(1, schemas.CallReady, true)), 2, true},
		{"a rejected call never starts", sparse(10, entry(0, schemas.CallDone, true), rejected(1, "")), 1, false},
		{"behind an unsettled rejection", sparse(10, entry(0, schemas.CallRunning, true), rejected(1, ""), entry(2, schemas.CallReady, true)), 2, false},
		{"behind a settled rejection", sparse(10, entry(0, schemas.CallDone, true), schemas.LeaseCall{Seq: 1, State: schemas.CallDone, Rejected: true}, entry(2, schemas.CallReady, true)), 2, true},
		{"missing entry", sparse(10, entry(0, schemas.CallDone, true)), 3, false},
	}
	for _, c := range cases {
		if got := lease.CanStart(c.l, c.seq); got != c.want {
			t.Errorf("%s: CanStart(%d) = %v, want %v", c.name, c.seq, got, c.want)
		}
	}
}

// TestSettle: a rejected call is done once every earlier call is, and only
// then sets the turn's abort, reaching from itself on.
func TestSettle(t *testing.T) {
	l := sparse(10, entry(0, schemas.CallDone, true), entry(1, schemas.CallRunning, true), rejected(2, "Cancelled: parallel tool call Bash errored"), rejected(3, "other"))
	if lease.Settle(l) || l.Abort != nil {
		t.Fatalf("settled while call 1 runs: %+v", l)
	}
	l.Peek(1).State = schemas.CallDone
	if !lease.Settle(l) {
		t.Fatal("nothing settled once every earlier call was done")
	}
	if l.Peek(2).State != schemas.CallDone || l.Peek(3).State != schemas.CallDone {
		t.Errorf("states %+v", l.Calls)
	}
	if l.Abort == nil || l.Abort.Seq != 2 || l.Abort.From != 2 || l.Abort.Text != "Cancelled: parallel tool call Bash errored" {
		t.Errorf("abort %+v, want the first rejection's, from 2", l.Abort)
	}
	for seq, want := range []bool{false, false, false, true} {
		if got := lease.Aborts(l, seq); got != want {
			t.Errorf("Aborts(%d) = %v, want %v", seq, got, want)
		}
	}
	// A gap stops the walk: the call before has not even arrived.
	g := sparse(10, entry(0, schemas.CallDone, true), rejected(2, "x"))
	if lease.Settle(g) || g.Peek(2).State != schemas.CallReady {
		t.Errorf("settled across a gap: %+v", g.Calls)
	}
	l.Total = 4
	if !lease.Complete(l) {
		t.Error("a turn whose rejections settled is not complete")
	}
}

// TestAbortReachesItsBatch: a failing safe call's abort reaches back to the
// start of its concurrent batch and no further.
func TestAbortReachesItsBatch(t *testing.T) {
	l := sparse(10, entry(0, schemas.CallDone, false), entry(1, schemas.CallRunning, true), entry(2, schemas.CallRunning, true), entry(3, schemas.CallReady, false))
	lease.Abort(l, 2, "Bash(false)")
	if l.Abort.From != 1 {
		t.Fatalf("From = %d, want 1", l.Abort.From)
	}
	for seq, want := range []bool{false, true, false, true} {
		if _, got := lease.StopRunning(l, seq, false); got != want {
			t.Errorf("StopRunning(%d) = %v, want %v", seq, got, want)
		}
	}
	lease.Abort(l, 3, "later")
	if l.Abort.Seq != 2 {
		t.Error("a later failure replaced the first abort")
	}
}
