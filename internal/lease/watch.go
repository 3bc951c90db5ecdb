package lease

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// Watcher tells parked calls that their turn's lease changed. It uses one
// core subscription per watched turn on the subject the lease bucket
// republishes the turn's writes to (subjects.Space.LeaseChanges): it sees
// every stored write with its revision, after the write is readable, and
// creates no server-side consumer, so a worker can watch thousands of
// turns cheaply. What it sees also keeps its Store's cached lease current,
// so the calls it wakes write without reading the lease first.
type Watcher struct {
	nc    *nats.Conn
	space subjects.Space
	store *Store

	mu    sync.Mutex
	turns map[string]*watched
}

type watched struct {
	sub  *nats.Subscription
	refs int
	// changed is closed and replaced on every write to the key.
	changed chan struct{}
	latest  uint64
	// last is the lease with the highest version notified, as written,
	// and lastLease it decoded, once asked for.
	last      []byte
	lastLease *schemas.Lease
}

// Watch is one waiter's view of a turn's lease changes.
type Watch struct {
	w    *Watcher
	key  string
	t    *watched
	once sync.Once
}

// NewWatcher returns a watcher for store's leases, on store's connection:
// a read or write of the store that follows a Watch on the same connection
// is ordered after the subscription, which is what lets the store trust
// its cache for a watched turn.
func NewWatcher(store *Store) *Watcher {
	return &Watcher{nc: store.js.Conn(), space: store.space, store: store, turns: map[string]*watched{}}
}

// Watch starts watching a turn. Call it before reading the lease, so no
// write between the read and the wait is missed; Release it when done.
func (w *Watcher) Watch(tenant, turn string) (*Watch, error) {
	key := w.space.LeaseKey(tenant, turn)
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.turns[key]
	if !ok {
		t = &watched{changed: make(chan struct{})}
		sub, err := w.nc.Subscribe(w.space.LeaseChanges(tenant, turn), func(m *nats.Msg) { w.notified(key, t, m) })
		if err != nil {
			return nil, fmt.Errorf("lease: watch %s: %w", key, err)
		}
		t.sub = sub
		w.turns[key] = t
	}
	t.refs++
	w.store.cache.watch(key)
	return &Watch{w: w, key: key, t: t}, nil
}

// notified takes one republished write: the store's cache first, then the
// waiters, so that a waiter woken reads at least this write.
func (w *Watcher) notified(key string, t *watched, m *nats.Msg) {
	rev, _ := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
	v, isLease := schemas.LeaseVersion(m.Data)
	switch {
	case len(m.Data) == 0 || m.Header.Get(kvOperationHeader) != "" || m.Header.Get(markerHeader) != "":
		// Deleted, purged or expired: nothing to write on.
		w.store.cache.forget(key)
	case isLease && rev > 0:
		w.store.cache.observe(key, m.Data, rev)
	}
	w.mu.Lock()
	if isLease && v >= t.latest {
		t.latest, t.last, t.lastLease = v, m.Data, nil
	}
	close(t.changed)
	t.changed = make(chan struct{})
	w.mu.Unlock()
}

// The headers of a republished write that say it removed the key.
const (
	kvOperationHeader = "KV-Operation"
	markerHeader      = "Nats-Marker-Reason"
)

// Changed returns a channel that is closed at the next write to the lease.
func (wa *Watch) Changed() <-chan struct{} {
	wa.w.mu.Lock()
	defer wa.w.mu.Unlock()
	return wa.t.changed
}

// Latest is the highest lease version notified so far.
func (wa *Watch) Latest() uint64 {
	wa.w.mu.Lock()
	defer wa.w.mu.Unlock()
	return wa.t.latest
}

// Last is the lease with the highest version notified, nil before any; it
// is shared by every waiter of the turn and must not be changed. Only
// stored writes are notified, so it is a lease the bucket held.
func (wa *Watch) Last() *schemas.Lease {
	wa.w.mu.Lock()
	defer wa.w.mu.Unlock()
	t := wa.t
	if t.last == nil {
		return nil
	}
	if t.lastLease == nil {
		// Decoded once per write for all the calls watching the turn.
		l, err := schemas.DecodeLease(t.last)
		if err != nil {
			return nil
		}
		t.lastLease = l
	}
	return t.lastLease
}

// Release ends the watch; the subscription goes with the last one.
func (wa *Watch) Release() {
	wa.once.Do(func() {
		wa.w.mu.Lock()
		defer wa.w.mu.Unlock()
		wa.t.refs--
		wa.w.store.cache.unwatch(wa.key)
		if wa.t.refs == 0 {
			_ = wa.t.sub.Unsubscribe()
			delete(wa.w.turns, wa.key)
		}
	})
}
