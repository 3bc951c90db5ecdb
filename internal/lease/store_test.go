package lease_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/schemas"
)

func TestNewStoreWithoutBucket(t *testing.T) {
	srv := testenv.Server(t) // no provisioning
	js, err := jetstream.New(testenv.Conn(t, srv, "p"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = lease.NewStore(testCtx(t, 10*time.Second), js, space, 0)
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Fatalf("NewStore without the bucket: err = %v, want ErrBucketNotFound", err)
	}
}

func TestUpdateCreatesWithFresh(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	ctx := testCtx(t, 30*time.Second)

	if _, _, err := p.store.Get(ctx, tenant, "t1"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("Get before any write: err = %v, want ErrKeyNotFound", err)
	}
	freshCalls := 0
	l, rev, err := p.store.Update(ctx, tenant, "t1", func() *schemas.Lease {
		freshCalls++
		l := schemas.NewLease(7, time.Now())
		l.WorkDir = "/w"
		return l
	}, addCall("a"))
	if err != nil {
		t.Fatal(err)
	}
	if freshCalls != 1 {
		t.Errorf("fresh called %d times, want 1", freshCalls)
	}
	if rev == 0 || l.Version != 1 || l.MaxConcurrency != 7 || l.Total != -1 || l.WorkDir != "/w" || !slices.Equal(tools(l), []string{"a"}) {
		t.Fatalf("created lease = %+v rev %d", l, rev)
	}
	got, grev, err := p.store.Get(ctx, tenant, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if grev != rev || got.Version != 1 || got.MaxConcurrency != 7 || got.WorkDir != "/w" || !slices.Equal(tools(got), []string{"a"}) {
		t.Fatalf("Get = %+v rev %d, want the created lease at rev %d", got, grev, rev)
	}
	// The KV sees the same key and revision.
	e, err := p.kv.Get(ctx, space.LeaseKey(tenant, "t1"))
	if err != nil {
		t.Fatal(err)
	}
	if e.Revision() != rev {
		t.Fatalf("kv revision %d, Update returned %d", e.Revision(), rev)
	}

	// With the lease present, fresh is not used.
	l2, rev2, err := p.store.Update(ctx, tenant, "t1", func() *schemas.Lease {
		freshCalls++
		return schemas.NewLease(1, time.Now())
	}, addCall("b"))
	if err != nil {
		t.Fatal(err)
	}
	if freshCalls != 1 {
		t.Errorf("fresh called on an existing lease")
	}
	if rev2 <= rev || l2.MaxConcurrency != 7 || !slices.Equal(tools(l2), []string{"a", "b"}) {
		t.Fatalf("second update = %+v rev %d", l2, rev2)
	}
}

func TestUpdateMissingWithoutFresh(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	ctx := testCtx(t, 30*time.Second)

	called := false
	l, rev, err := p.store.Update(ctx, tenant, "nope", nil, func(l *schemas.Lease) error {
		called = true
		return nil
	})
	if !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("Update without fresh on a missing lease: err = %v, want ErrKeyNotFound", err)
	}
	if l != nil || rev != 0 {
		t.Errorf("Update returned lease %+v rev %d with an error", l, rev)
	}
	if called {
		t.Errorf("the mutator was called without a lease")
	}
	if _, _, err := p.store.Get(ctx, tenant, "nope"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("Get after a failed Update: err = %v, want ErrKeyNotFound", err)
	}
}

func TestUpdateMissingNoChangeCreatesNothing(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	ctx := testCtx(t, 30*time.Second)

	_, _, err := p.store.Update(ctx, tenant, "t", freshLease, func(l *schemas.Lease) error { return lease.ErrNoChange })
	if !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("ErrNoChange on a missing lease: err = %v, want ErrKeyNotFound", err)
	}
	if _, _, err := p.store.Get(ctx, tenant, "t"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("ErrNoChange created the lease: Get err = %v", err)
	}
}

func TestUpdateNoChange(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	ctx := testCtx(t, 30*time.Second)

	_, rev, err := p.store.Update(ctx, tenant, "t", freshLease, addCall("a"))
	if err != nil {
		t.Fatal(err)
	}
	l, rev2, err := p.store.Update(ctx, tenant, "t", nil, func(l *schemas.Lease) error { return lease.ErrNoChange })
	if err != nil {
		t.Fatalf("ErrNoChange: err = %v, want nil", err)
	}
	if rev2 != rev {
		t.Fatalf("ErrNoChange: rev %d, want unchanged %d", rev2, rev)
	}
	if l == nil || l.Version != 1 || !slices.Equal(tools(l), []string{"a"}) {
		t.Fatalf("ErrNoChange returned %+v, want the lease as read", l)
	}
	e, err := p.kv.Get(ctx, space.LeaseKey(tenant, "t"))
	if err != nil {
		t.Fatal(err)
	}
	if e.Revision() != rev {
		t.Fatalf("kv revision %d after ErrNoChange, want %d", e.Revision(), rev)
	}
	st, err := p.js.Stream(ctx, "KV_"+space.LeaseBucket())
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.LastSeq != rev {
		t.Fatalf("bucket last sequence %d after ErrNoChange, want %d (nothing written)", info.State.LastSeq, rev)
	}
	// A wrapped ErrNoChange counts too.
	_, rev3, err := p.store.Update(ctx, tenant, "t", nil, func(l *schemas.Lease) error {
		return fmt.Errorf("nothing to do: %w", lease.ErrNoChange)
	})
	if err != nil || rev3 != rev {
		t.Fatalf("wrapped ErrNoChange: rev %d err %v, want rev %d nil", rev3, err, rev)
	}
}

var errBoom = errors.New("boom")

func TestUpdateMutatorError(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	ctx := testCtx(t, 30*time.Second)

	_, rev, err := p.store.Update(ctx, tenant, "t", freshLease, addCall("a"))
	if err != nil {
		t.Fatal(err)
	}
	l, rev2, err := p.store.Update(ctx, tenant, "t", nil, func(l *schemas.Lease) error {
		return fmt.Errorf("mutating: %w", errBoom)
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("mutator error: err = %v, want errBoom", err)
	}
	if l != nil || rev2 != 0 {
		t.Errorf("mutator error returned lease %+v rev %d", l, rev2)
	}
	got, grev, err := p.store.Get(ctx, tenant, "t")
	if err != nil {
		t.Fatal(err)
	}
	if grev != rev || got.Version != 1 {
		t.Fatalf("after a mutator error: rev %d version %d, want rev %d version 1", grev, got.Version, rev)
	}
}

// TestUpdateMutatorErrorOnCreate: the lease does not exist, fresh is given
// and the mutator refuses: the caller must get the mutator's error back (and
// nothing is created).
func TestUpdateMutatorErrorOnCreate(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	ctx := testCtx(t, 30*time.Second)

	_, _, err := p.store.Update(ctx, tenant, "t", freshLease, func(l *schemas.Lease) error { return errBoom })
	if _, _, gerr := p.store.Get(ctx, tenant, "t"); !errors.Is(gerr, jetstream.ErrKeyNotFound) {
		t.Errorf("a refused create wrote the lease: Get err = %v", gerr)
	}
	if !errors.Is(err, errBoom) {
		t.Fatalf("mutator error on a missing lease (with fresh): err = %v, want the mutator's errBoom", err)
	}
}

func TestUpdateCorruptValue(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	ctx := testCtx(t, 30*time.Second)

	if _, err := p.kv.Put(ctx, space.LeaseKey(tenant, "t"), []byte{0xc1}); err != nil {
		t.Fatal(err)
	}
	_, _, err := p.store.Update(ctx, tenant, "t", freshLease, addCall("a"))
	var fe *schemas.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("Update of a corrupt value: err = %v, want a *schemas.FieldError", err)
	}
}

func TestUpdateVersionIncrementsByOne(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	q := newProc(t, srv, "q", 0)
	ctx := testCtx(t, 30*time.Second)

	var lastRev uint64
	for i := 1; i <= 6; i++ {
		st := p.store
		if i%2 == 0 {
			st = q.store // writers in two processes share the count
		}
		l, rev, err := st.Update(ctx, tenant, "t", freshLease, addCall(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		if l.Version != uint64(i) {
			t.Fatalf("write %d: Version %d, want %d", i, l.Version, i)
		}
		if rev <= lastRev {
			t.Fatalf("write %d: rev %d not above %d", i, rev, lastRev)
		}
		lastRev = rev
		got, grev, err := p.store.Get(ctx, tenant, "t")
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != uint64(i) || grev != rev {
			t.Fatalf("write %d: Get version %d rev %d, want %d rev %d", i, got.Version, grev, i, rev)
		}
		if v, ok := schemas.LeaseVersion(mustRaw(t, p, "t")); !ok || v != uint64(i) {
			t.Fatalf("write %d: LeaseVersion of the stored value = %d %v", i, v, ok)
		}
		// A no-op does not count as a write.
		if _, _, err := st.Update(ctx, tenant, "t", nil, func(*schemas.Lease) error { return lease.ErrNoChange }); err != nil {
			t.Fatal(err)
		}
	}
}

func mustRaw(t *testing.T, p *proc, turn string) []byte {
	t.Helper()
	e, err := p.kv.Get(testCtx(t, 10*time.Second), space.LeaseKey(tenant, turn))
	if err != nil {
		t.Fatal(err)
	}
	return e.Value()
}

// TestUpdateRetriesOnConflict forces one conflict: the mutator of p, on its
// first run, lets another process write the key. p's write must fail the
// compare-and-set, re-read and re-apply on top of q's change.
func TestUpdateRetriesOnConflict(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	q := newProc(t, srv, "q", 0)
	ctx := testCtx(t, 30*time.Second)

	if _, _, err := p.store.Update(ctx, tenant, "t", freshLease, addCall("first")); err != nil {
		t.Fatal(err)
	}
	runs := 0
	l, rev, err := p.store.Update(ctx, tenant, "t", nil, func(l *schemas.Lease) error {
		runs++
		if runs == 1 {
			if _, _, err := q.store.Update(ctx, tenant, "t", nil, addCall("q")); err != nil {
				return err
			}
		}
		l.Calls = append(l.Calls, schemas.LeaseCall{Seq: len(l.Calls), Tool: "p"})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 {
		t.Errorf("mutator ran %d times, want 2 (one conflict)", runs)
	}
	want := []string{"first", "q", "p"}
	if !slices.Equal(tools(l), want) || l.Version != 3 {
		t.Fatalf("after the conflict: %v version %d, want %v version 3", tools(l), l.Version, want)
	}
	got, grev, err := q.store.Get(ctx, tenant, "t")
	if err != nil {
		t.Fatal(err)
	}
	if grev != rev || !slices.Equal(tools(got), want) {
		t.Fatalf("stored %v rev %d, want %v rev %d", tools(got), grev, want, rev)
	}
}

// TestUpdateCreateRace: two processes create the same lease at once; one
// Create loses and must retry as an update, not overwrite.
func TestUpdateCreateRace(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	q := newProc(t, srv, "q", 0)
	ctx := testCtx(t, 30*time.Second)

	runs := 0
	l, _, err := p.store.Update(ctx, tenant, "t", freshLease, func(l *schemas.Lease) error {
		runs++
		if runs == 1 {
			if _, _, err := q.store.Update(ctx, tenant, "t", freshLease, addCall("q")); err != nil {
				return err
			}
		}
		l.Calls = append(l.Calls, schemas.LeaseCall{Seq: len(l.Calls), Tool: "p"})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if runs != 2 || !slices.Equal(tools(l), []string{"q", "p"}) || l.Version != 2 {
		t.Fatalf("create race: runs %d, %v version %d; want 2 runs, [q p] version 2", runs, tools(l), l.Version)
	}
}

// TestUpdateConcurrentNoLostUpdate: 3 processes (own connection, own Store)
// × 8 goroutines × 50 increments each; every increment must survive.
func TestUpdateConcurrentNoLostUpdate(t *testing.T) {
	const procs, goroutines, increments = 3, 8, 50
	srv := server(t)
	ctx := testCtx(t, 3*time.Minute)
	ps := make([]*proc, procs)
	for i := range ps {
		ps[i] = newProc(t, srv, fmt.Sprintf("p%d", i), 0)
	}

	type result struct {
		rev     uint64
		version uint64
	}
	var (
		mu      sync.Mutex
		results []result
		wg      sync.WaitGroup
		errs    = make(chan error, procs*goroutines)
	)
	for pi, p := range ps {
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < increments; i++ {
					tag := fmt.Sprintf("%d/%d/%03d", pi, g, i)
					l, rev, err := p.store.Update(ctx, tenant, "hot", freshLease, func(l *schemas.Lease) error {
						l.Calls = append(l.Calls, schemas.LeaseCall{Seq: len(l.Calls), Tool: tag})
						l.MaxConcurrency++
						return nil
					})
					if err != nil {
						errs <- fmt.Errorf("%s: %w", tag, err)
						return
					}
					if !slices.Contains(tools(l), tag) {
						errs <- fmt.Errorf("%s: the returned lease (rev %d) lacks the caller's own change", tag, rev)
						return
					}
					mu.Lock()
					results = append(results, result{rev, l.Version})
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}

	const total = procs * goroutines * increments
	got, _, err := ps[0].store.Get(ctx, tenant, "hot")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Calls) != total {
		t.Fatalf("%d calls in the lease, want %d (lost updates)", len(got.Calls), total)
	}
	if got.MaxConcurrency != 4+total {
		t.Fatalf("counter = %d, want %d (lost updates)", got.MaxConcurrency, 4+total)
	}
	// Every increment exactly once, and each goroutine's in its order.
	seen := map[string]bool{}
	last := map[string]string{}
	for _, c := range got.Calls {
		if seen[c.Tool] {
			t.Fatalf("increment %s applied twice", c.Tool)
		}
		seen[c.Tool] = true
		g := c.Tool[:len(c.Tool)-4]
		if prev, ok := last[g]; ok && prev > c.Tool {
			t.Fatalf("goroutine %s: %s after %s", g, c.Tool, prev)
		}
		last[g] = c.Tool
	}
	// One Version per write: the distinct revisions handed out are the
	// writes, the final Version counts them, and versions grow with revisions.
	sort.Slice(results, func(i, j int) bool { return results[i].rev < results[j].rev })
	writes := 0
	for i, r := range results {
		if i > 0 && r.rev == results[i-1].rev {
			if r.version != results[i-1].version {
				t.Fatalf("rev %d handed out with versions %d and %d", r.rev, r.version, results[i-1].version)
			}
			continue
		}
		writes++
		if i > 0 && r.version <= results[i-1].version {
			t.Fatalf("rev %d has version %d, not above version %d of rev %d", r.rev, r.version, results[i-1].version, results[i-1].rev)
		}
	}
	if got.Version != uint64(writes) {
		t.Fatalf("final Version %d, but %d distinct writes were acknowledged", got.Version, writes)
	}
	t.Logf("%d increments in %d writes", total, writes)
}

// TestUpdateCombinedInOrder: while one update of a turn is in flight,
// updates from the same Store queue and are applied in call order in one
// compare-and-set.
func TestUpdateCombinedInOrder(t *testing.T) {
	const n = 6
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	ctx := testCtx(t, time.Minute)

	if _, _, err := p.store.Update(ctx, tenant, "t", freshLease, addCall("create")); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	type out struct {
		l   *schemas.Lease
		rev uint64
		err error
	}
	leader := make(chan out, 1)
	go func() {
		l, rev, err := p.store.Update(ctx, tenant, "t", nil, func(l *schemas.Lease) error {
			once.Do(func() { close(entered); <-release })
			l.Calls = append(l.Calls, schemas.LeaseCall{Seq: len(l.Calls), Tool: "leader"})
			return nil
		})
		leader <- out{l, rev, err}
	}()
	<-entered
	base := queuedUpdates()
	outs := make([]chan out, n)
	for i := 0; i < n; i++ {
		outs[i] = make(chan out, 1)
		go func() {
			l, rev, err := p.store.Update(ctx, tenant, "t", nil, addCall(fmt.Sprintf("f%d", i)))
			outs[i] <- out{l, rev, err}
		}()
		waitQueued(t, base+i+1) // follower i is queued before follower i+1 calls Update
	}
	close(release)

	lo := <-leader
	if lo.err != nil {
		t.Fatal(lo.err)
	}
	if lo.l.Version != 2 || !slices.Equal(tools(lo.l), []string{"create", "leader"}) {
		t.Fatalf("leader wrote %v version %d", tools(lo.l), lo.l.Version)
	}
	want := []string{"create", "leader"}
	for i := 0; i < n; i++ {
		want = append(want, fmt.Sprintf("f%d", i))
	}
	var rev uint64
	for i := 0; i < n; i++ {
		o := <-outs[i]
		if o.err != nil {
			t.Fatalf("follower %d: %v", i, o.err)
		}
		if i == 0 {
			rev = o.rev
		} else if o.rev != rev {
			t.Errorf("follower %d written at rev %d, follower 0 at %d: queued updates not combined", i, o.rev, rev)
		}
		if o.l.Version != 3 {
			t.Errorf("follower %d: version %d, want 3 (one combined write)", i, o.l.Version)
		}
		if !slices.Equal(tools(o.l), want) {
			t.Errorf("follower %d sees %v, want %v", i, tools(o.l), want)
		}
	}
	got, grev, err := p.store.Get(ctx, tenant, "t")
	if err != nil {
		t.Fatal(err)
	}
	if grev != rev || got.Version != 3 || !slices.Equal(tools(got), want) {
		t.Fatalf("stored %v version %d rev %d, want %v version 3 rev %d", tools(got), got.Version, grev, want, rev)
	}
}

// TestUpdateCombinedMixedOutcomes: in one combined batch, a refused update
// and a no-op do not stop the others, and each caller gets its own outcome.
func TestUpdateCombinedMixedOutcomes(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	ctx := testCtx(t, time.Minute)

	if _, _, err := p.store.Update(ctx, tenant, "t", freshLease, addCall("create")); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	leaderErr := make(chan error, 1)
	go func() {
		_, _, err := p.store.Update(ctx, tenant, "t", nil, func(l *schemas.Lease) error {
			once.Do(func() { close(entered); <-release })
			return lease.ErrNoChange
		})
		leaderErr <- err
	}()
	<-entered
	base := queuedUpdates()
	type out struct {
		l   *schemas.Lease
		rev uint64
		err error
	}
	mutators := []lease.Mutator{
		addCall("a"),
		func(*schemas.Lease) error { return errBoom },
		func(*schemas.Lease) error { return lease.ErrNoChange },
		addCall("b"),
	}
	outs := make([]chan out, len(mutators))
	for i, fn := range mutators {
		outs[i] = make(chan out, 1)
		go func() {
			l, rev, err := p.store.Update(ctx, tenant, "t", nil, fn)
			outs[i] <- out{l, rev, err}
		}()
		waitQueued(t, base+i+1)
	}
	close(release)
	if err := <-leaderErr; err != nil {
		t.Fatal(err)
	}
	res := make([]out, len(outs))
	for i := range outs {
		res[i] = <-outs[i]
	}
	if res[0].err != nil || res[2].err != nil || res[3].err != nil {
		t.Fatalf("errors: %v %v %v", res[0].err, res[2].err, res[3].err)
	}
	if !errors.Is(res[1].err, errBoom) || res[1].l != nil {
		t.Fatalf("refused update: %+v, want errBoom and no lease", res[1])
	}
	want := []string{"create", "a", "b"}
	for _, i := range []int{0, 2, 3} {
		if res[i].rev != res[0].rev || res[i].l.Version != 2 || !slices.Equal(tools(res[i].l), want) {
			t.Errorf("update %d: %v version %d rev %d, want %v version 2 rev %d", i, tools(res[i].l), res[i].l.Version, res[i].rev, want, res[0].rev)
		}
	}
}

// TestUpdateLeaderCancelDoesNotFailQueued: the caller whose Update leads a
// key's queue gives up (its context is cancelled) while other callers'
// updates are queued behind it. Their contexts are live, so their updates
// must still be applied.
func TestUpdateLeaderCancelDoesNotFailQueued(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	ctx := testCtx(t, time.Minute)

	if _, _, err := p.store.Update(ctx, tenant, "t", freshLease, addCall("create")); err != nil {
		t.Fatal(err)
	}
	leaderCtx, cancelLeader := context.WithCancel(ctx)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	leaderErr := make(chan error, 1)
	go func() {
		_, _, err := p.store.Update(leaderCtx, tenant, "t", nil, func(l *schemas.Lease) error {
			once.Do(func() { close(entered); <-release })
			l.Calls = append(l.Calls, schemas.LeaseCall{Seq: len(l.Calls), Tool: "leader"})
			return nil
		})
		leaderErr <- err
	}()
	<-entered
	base := queuedUpdates()
	followerErr := make(chan error, 1)
	go func() {
		_, _, err := p.store.Update(ctx, tenant, "t", nil, addCall("follower"))
		followerErr <- err
	}()
	waitQueued(t, base+1)
	cancelLeader()
	close(release)
	t.Logf("leader (cancelled): %v", <-leaderErr)
	if err := <-followerErr; err != nil {
		t.Fatalf("queued update with a live context failed because the leading caller's context was cancelled: %v", err)
	}
	got, _, err := p.store.Get(ctx, tenant, "t")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tools(got), "follower") {
		t.Fatalf("follower's change missing: %v", tools(got))
	}
}

// TestUpdateTTLSurvivesUpdates: a Store with a 2 s TTL; updates keep the
// lease alive past 2 s after its creation (each write renews the TTL), and
// after the last one it expires (the TTL was not dropped by the updates).
// The TTL is the Store's (NewStore ttl; provision.Config.LeaseTTL reaches
// it through the router and executor configs); the bucket provision creates
// allows per-key TTLs (LimitMarkerTTL, History 1).
func TestUpdateTTLSurvivesUpdates(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a TTL expiry")
	}
	const ttl = 2 * time.Second
	srv := server(t)
	p := newProc(t, srv, "p", ttl)
	ctx := testCtx(t, time.Minute)

	st, err := p.js.Stream(ctx, "KV_"+space.LeaseBucket())
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Config.AllowMsgTTL || info.Config.MaxMsgsPerSubject != 1 {
		t.Fatalf("lease bucket: AllowMsgTTL %v, history %d; want per-key TTLs and history 1", info.Config.AllowMsgTTL, info.Config.MaxMsgsPerSubject)
	}

	created := time.Now()
	if _, _, err := p.store.Update(ctx, tenant, "t", freshLease, addCall("0")); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		time.Sleep(700 * time.Millisecond)
		if _, _, err := p.store.Update(ctx, tenant, "t", nil, addCall(fmt.Sprint(i))); err != nil {
			t.Fatalf("update %d at +%v: %v", i, time.Since(created).Round(time.Millisecond), err)
		}
	}
	last := time.Now()
	if since := last.Sub(created); since < ttl {
		t.Logf("updates took only %v; renewal is checked by the expiry time below", since)
	}
	// Present right after the last write, and past the creation's 2 s.
	if _, _, err := p.store.Get(ctx, tenant, "t"); err != nil {
		t.Fatalf("Get right after the last update (+%v from create): %v", time.Since(created).Round(time.Millisecond), err)
	}
	var gone time.Duration
	for {
		_, _, err := p.store.Get(ctx, tenant, "t")
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			gone = time.Since(last)
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(last) > 12*time.Second {
			t.Fatalf("lease still present %v after its last update with a %v TTL: the updates dropped the TTL", time.Since(last).Round(time.Millisecond), ttl)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("expired %v after the last update (%v after creation)", gone.Round(time.Millisecond), time.Since(created).Round(time.Millisecond))
	if gone < ttl-500*time.Millisecond {
		t.Fatalf("expired %v after the last update: the update did not renew the %v TTL", gone, ttl)
	}
	if gone > 6*time.Second {
		t.Fatalf("expired only %v after the last update, want within ~2–6 s", gone)
	}
	// Gone means gone for Update without fresh; with fresh it starts anew.
	if _, _, err := p.store.Update(ctx, tenant, "t", nil, addCall("x")); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("Update without fresh after expiry: err = %v, want ErrKeyNotFound", err)
	}
	l, _, err := p.store.Update(ctx, tenant, "t", freshLease, addCall("new"))
	if err != nil {
		t.Fatalf("recreating an expired lease: %v", err)
	}
	if l.Version != 1 || !slices.Equal(tools(l), []string{"new"}) {
		t.Fatalf("recreated lease %v version %d, want [new] version 1", tools(l), l.Version)
	}
}
