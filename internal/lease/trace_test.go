package lease_test

import (
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/schemas"
)

// TestTraceConflict: an update whose write another process's refused
// tells the trace on its context, once per refused write; the other
// process's update, which met no conflict, tells its own trace nothing.
func TestTraceConflict(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	q := newProc(t, srv, "q", 0)
	base := testCtx(t, 30*time.Second)
	var pConflicts, qConflicts int
	pctx := lease.WithTrace(base, &lease.Trace{Conflict: func() { pConflicts++ }})
	qctx := lease.WithTrace(base, &lease.Trace{Conflict: func() { qConflicts++ }})

	if _, _, err := p.store.Update(pctx, tenant, "t", freshLease, addCall("first")); err != nil {
		t.Fatal(err)
	}
	if pConflicts != 0 {
		t.Fatalf("%d conflicts creating the lease", pConflicts)
	}
	runs := 0
	_, _, err := p.store.Update(pctx, tenant, "t", nil, func(l *schemas.Lease) error {
		runs++
		if runs == 1 {
			// q writes between p's read (its cache) and p's write.
			if _, _, err := q.store.Update(qctx, tenant, "t", nil, addCall("q")); err != nil {
				return err
			}
		}
		return addCall("p")(l)
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 || pConflicts != 1 || qConflicts != 0 {
		t.Errorf("mutator ran %d times, conflicts told: p %d, q %d; want 2, 1, 0", runs, pConflicts, qConflicts)
	}
}
