package lease_test

import (
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/schemas"
)

// TestStandingRidesOnTheWriteThatAllowsIt: a standing update waits while
// the writes do not let it change the lease, then goes in the very write
// that does, and is withdrawn as written; one withdrawn first never runs.
func TestStandingRidesOnTheWriteThatAllowsIt(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	ctx := testCtx(t, 30*time.Second)
	if _, _, err := p.store.Update(ctx, tenant, "st", freshLease, addCall("a")); err != nil {
		t.Fatal(err)
	}
	// Marks call 1 once the lease holds a call tagged "b".
	marks := func(l *schemas.Lease) error {
		if len(l.Calls) < 2 || l.Calls[1].Tool != "b" {
			return lease.ErrNoChange
		}
		l.Calls[1].State = schemas.CallReady
		return nil
	}
	st := p.store.Stand(tenant, "st", marks)
	never := p.store.Stand(tenant, "st", marks)
	if p.store.Withdraw(never) {
		t.Fatal("a standing update withdrawn before any write says it was written")
	}
	if _, _, err := p.store.Update(ctx, tenant, "st", nil, func(l *schemas.Lease) error { l.Chars++; return nil }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-st.Fired():
		t.Fatal("fired on a write that did not allow it")
	default:
	}
	l, rev, err := p.store.Update(ctx, tenant, "st", nil, addCall("b"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-st.Fired():
	default:
		t.Fatal("not fired by the write that allowed it")
	}
	got, grev := st.Result()
	if grev != rev || got.Calls[1].State != schemas.CallReady || l.Calls[1].State != schemas.CallReady {
		t.Errorf("written at %d (the write at %d): call 1 %v", grev, rev, got.Calls[1].State)
	}
	if !p.store.Withdraw(st) {
		t.Error("Withdraw of a fired update says it was not written")
	}
	stored, _, err := p.store.Get(ctx, tenant, "st")
	if err != nil {
		t.Fatal(err)
	}
	if stored.Calls[1].State != schemas.CallReady {
		t.Errorf("stored call 1 is %v, want ready: the standing change went in the write", stored.Calls[1].State)
	}
}

// TestFailedWriteLeavesNoTrace: an update whose write fails (here over the
// server's payload limit) leaves nothing behind in the store's cache for
// the next update to write.
func TestFailedWriteLeavesNoTrace(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	ctx := testCtx(t, 30*time.Second)
	if _, _, err := p.store.Update(ctx, tenant, "fw", freshLease, addCall("a")); err != nil {
		t.Fatal(err)
	}
	p.store.Forget(tenant, "fw") // the next update reads, then changes what it read
	huge := func(l *schemas.Lease) error {
		l.Calls = append(l.Calls, schemas.LeaseCall{Seq: len(l.Calls), State: schemas.CallRouted, Tool: "phantom"})
		l.WorkDir = strings.Repeat("x", 9<<20)
		return nil
	}
	if _, _, err := p.store.Update(ctx, tenant, "fw", nil, huge); err == nil {
		t.Fatal("a 9 MiB lease was written")
	}
	l, _, err := p.store.Update(ctx, tenant, "fw", nil, addCall("b"))
	if err != nil {
		t.Fatal(err)
	}
	if got := tools(l); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("after a failed write the lease holds %v, want [a b]", got)
	}
}
