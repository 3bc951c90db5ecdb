package lease_test

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/schemas"
)

// notifyWait bounds how long a notification may take (shared 2-core machine).
const notifyWait = 10 * time.Second

// quiet is how long we watch for a notification that must not come.
const quiet = 300 * time.Millisecond

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(notifyWait):
		t.Fatalf("%s: no notification within %v", what, notifyWait)
	}
}

func notClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s: unexpected notification", what)
	case <-time.After(quiet):
	}
}

// flush makes sure the server has the watcher's subscription before another
// connection writes (Watch itself does not wait for the server).
func flush(t *testing.T, nc *nats.Conn) {
	t.Helper()
	if err := nc.FlushTimeout(notifyWait); err != nil {
		t.Fatal(err)
	}
}

func TestWatchSeesWriteFromOtherConnection(t *testing.T) {
	srv := server(t)
	watcher := newProc(t, srv, "watcher", 0)
	writer := newProc(t, srv, "writer", 0)
	ctx := testCtx(t, 30*time.Second)
	w := lease.NewWatcher(watcher.store)

	wa, err := w.Watch(tenant, "t")
	if err != nil {
		t.Fatal(err)
	}
	defer wa.Release()
	flush(t, watcher.nc)
	if wa.Latest() != 0 {
		t.Fatalf("Latest before any write = %d", wa.Latest())
	}
	ch := wa.Changed()
	notClosed(t, ch, "before any write")

	l, _, err := writer.store.Update(ctx, tenant, "t", freshLease, addCall("a"))
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, ch, "create")
	if got := wa.Latest(); got != l.Version {
		t.Fatalf("Latest = %d after writing version %d", got, l.Version)
	}

	// A new Changed channel for the next write, open until it comes.
	ch2 := wa.Changed()
	if ch2 == ch {
		t.Fatal("Changed returned the already-closed channel after the notification")
	}
	notClosed(t, ch2, "no second write yet")
	for i := 0; i < 3; i++ {
		if l, _, err = writer.store.Update(ctx, tenant, "t", nil, addCall("b")); err != nil {
			t.Fatal(err)
		}
	}
	waitClosed(t, ch2, "updates")
	deadline := time.Now().Add(notifyWait)
	for wa.Latest() != l.Version {
		if time.Now().After(deadline) {
			t.Fatalf("Latest = %d, want %d after three more writes", wa.Latest(), l.Version)
		}
		time.Sleep(5 * time.Millisecond)
	}

	// A no-op writes nothing, so notifies nothing.
	ch3 := wa.Changed()
	if _, _, err := writer.store.Update(ctx, tenant, "t", nil, func(*schemas.Lease) error { return lease.ErrNoChange }); err != nil {
		t.Fatal(err)
	}
	notClosed(t, ch3, "ErrNoChange")
}

func TestWatchOtherTurnNotNotified(t *testing.T) {
	srv := server(t)
	watcher := newProc(t, srv, "watcher", 0)
	writer := newProc(t, srv, "writer", 0)
	ctx := testCtx(t, 30*time.Second)
	w := lease.NewWatcher(watcher.store)
	base := watcher.nc.NumSubscriptions() // the JetStream reply subscription

	a, err := w.Watch(tenant, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Release()
	b, err := w.Watch(tenant, "b")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	other, err := w.Watch("other", "a") // same turn id, other tenant
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	flush(t, watcher.nc)
	if n := watcher.nc.NumSubscriptions() - base; n != 3 {
		t.Fatalf("%d subscriptions for three watched turns, want 3", n)
	}
	cha, chb, cho := a.Changed(), b.Changed(), other.Changed()
	if _, _, err := writer.store.Update(ctx, tenant, "a", freshLease, addCall("x")); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, cha, "turn a")
	notClosed(t, chb, "turn b after a write to a")
	notClosed(t, cho, "tenant other after a write to acme's a")
	if b.Latest() != 0 || other.Latest() != 0 {
		t.Fatalf("Latest of unwritten turns: %d %d", b.Latest(), other.Latest())
	}
}

// TestWatchSharedSubscription: two watchers of one turn share one
// subscription and both see a write.
func TestWatchSharedSubscription(t *testing.T) {
	srv := server(t)
	watcher := newProc(t, srv, "watcher", 0)
	writer := newProc(t, srv, "writer", 0)
	ctx := testCtx(t, 30*time.Second)
	w := lease.NewWatcher(watcher.store)
	base := watcher.nc.NumSubscriptions()

	w1, err := w.Watch(tenant, "t")
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Release()
	w2, err := w.Watch(tenant, "t")
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Release()
	if n := watcher.nc.NumSubscriptions() - base; n != 1 {
		t.Fatalf("two watchers of one turn hold %d subscriptions, want 1", n)
	}
	flush(t, watcher.nc)
	c1, c2 := w1.Changed(), w2.Changed()
	l, _, err := writer.store.Update(ctx, tenant, "t", freshLease, addCall("a"))
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, c1, "watcher 1")
	waitClosed(t, c2, "watcher 2")
	if w1.Latest() != l.Version || w2.Latest() != l.Version {
		t.Fatalf("Latest = %d, %d; want %d", w1.Latest(), w2.Latest(), l.Version)
	}
}

// TestWatchRelease: the subscription lives while any watcher of the turn
// does, Release is idempotent, and a Watch after the last Release works.
func TestWatchRelease(t *testing.T) {
	srv := server(t)
	watcher := newProc(t, srv, "watcher", 0)
	writer := newProc(t, srv, "writer", 0)
	ctx := testCtx(t, 30*time.Second)
	w := lease.NewWatcher(watcher.store)
	base := watcher.nc.NumSubscriptions()
	subs := func() int { return watcher.nc.NumSubscriptions() - base }

	w1, err := w.Watch(tenant, "t")
	if err != nil {
		t.Fatal(err)
	}
	w2, err := w.Watch(tenant, "t")
	if err != nil {
		t.Fatal(err)
	}
	// Releasing one watcher, even twice, keeps the other's subscription.
	w1.Release()
	w1.Release()
	if subs() != 1 {
		t.Fatalf("after releasing one of two watchers (twice): %d subscriptions, want 1", subs())
	}
	flush(t, watcher.nc)
	c2 := w2.Changed()
	if _, _, err := writer.store.Update(ctx, tenant, "t", freshLease, addCall("a")); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, c2, "remaining watcher")

	// The last Release unsubscribes.
	w2.Release()
	if subs() != 0 {
		t.Fatalf("after the last Release: %d subscriptions, want 0", subs())
	}
	flush(t, watcher.nc)
	// Nothing left on the server either: a write no longer reaches the
	// watcher's connection.
	before := watcher.nc.Stats().InMsgs
	if _, _, err := writer.store.Update(ctx, tenant, "t", nil, addCall("b")); err != nil {
		t.Fatal(err)
	}
	flush(t, writer.nc)
	time.Sleep(quiet)
	if after := watcher.nc.Stats().InMsgs; after != before {
		t.Fatalf("the watcher's connection still received %d messages after the last Release", after-before)
	}

	// A second Watch after the release works.
	w3, err := w.Watch(tenant, "t")
	if err != nil {
		t.Fatal(err)
	}
	defer w3.Release()
	if subs() != 1 {
		t.Fatalf("Watch after release: %d subscriptions, want 1", subs())
	}
	flush(t, watcher.nc)
	c3 := w3.Changed()
	l, _, err := writer.store.Update(ctx, tenant, "t", nil, addCall("c"))
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, c3, "watch after release")
	if w3.Latest() != l.Version {
		t.Fatalf("Latest = %d after writing version %d", w3.Latest(), l.Version)
	}
	// The released watches do not panic when used again.
	w1.Release()
	w2.Release()
	if subs() != 1 {
		t.Fatalf("extra Releases of old watches dropped the new subscription: %d", subs())
	}
}

// TestWatchSeesOwnStoreWrites: a watcher on the same connection as the
// store (as an executor has it) sees that store's writes too.
func TestWatchSeesOwnStoreWrites(t *testing.T) {
	srv := server(t)
	p := newProc(t, srv, "p", 0)
	ctx := testCtx(t, 30*time.Second)
	w := lease.NewWatcher(p.store)
	wa, err := w.Watch(tenant, "t")
	if err != nil {
		t.Fatal(err)
	}
	defer wa.Release()
	ch := wa.Changed()
	l, _, err := p.store.Update(ctx, tenant, "t", freshLease, addCall("a"))
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, ch, "own write")
	if wa.Latest() != l.Version {
		t.Fatalf("Latest = %d, want %d", wa.Latest(), l.Version)
	}
}
