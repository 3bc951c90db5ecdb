package lease

import (
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// Watcher tells parked calls that their turn's lease changed. It uses one
// core subscription per watched turn on the key's KV subject, which sees
// every write as it is published; unlike kv.Watch it creates no server-side
// consumer, so a worker can watch thousands of turns cheaply.
//
// A notification can arrive before the write is readable (the stream
// stores it on its own goroutine), so a Watch also remembers the highest
// lease Version notified: a read below it is known to be stale.
type Watcher struct {
	nc    *nats.Conn
	space subjects.Space

	mu    sync.Mutex
	turns map[string]*watched
}

type watched struct {
	sub  *nats.Subscription
	refs int
	// changed is closed and replaced on every write to the key.
	changed chan struct{}
	latest  uint64
	// last is the lease with the highest version notified, as written.
	last []byte
}

// Watch is one waiter's view of a turn's lease changes.
type Watch struct {
	w    *Watcher
	key  string
	t    *watched
	once sync.Once
}

// NewWatcher returns a watcher on nc.
func NewWatcher(nc *nats.Conn, space subjects.Space) *Watcher {
	return &Watcher{nc: nc, space: space, turns: map[string]*watched{}}
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
		sub, err := w.nc.Subscribe(w.space.LeaseSubject(tenant, turn), func(m *nats.Msg) {
			v, _ := schemas.LeaseVersion(m.Data)
			w.mu.Lock()
			if v >= t.latest {
				t.latest, t.last = v, m.Data
			}
			close(t.changed)
			t.changed = make(chan struct{})
			w.mu.Unlock()
		})
		if err != nil {
			return nil, fmt.Errorf("lease: watch %s: %w", key, err)
		}
		t.sub = sub
		w.turns[key] = t
	}
	t.refs++
	return &Watch{w: w, key: key, t: t}, nil
}

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

// Last is the lease with the highest version notified, nil before any.
// It may be a write that lost its compare-and-set; the marks a call acts on
// (abort, cancel, discard) are only ever added, and their writers retry
// until they land, so acting on them early is safe.
func (wa *Watch) Last() *schemas.Lease {
	wa.w.mu.Lock()
	b := wa.t.last
	wa.w.mu.Unlock()
	if b == nil {
		return nil
	}
	l, err := schemas.DecodeLease(b)
	if err != nil {
		return nil
	}
	return l
}

// Release ends the watch; the subscription goes with the last one.
func (wa *Watch) Release() {
	wa.once.Do(func() {
		wa.w.mu.Lock()
		defer wa.w.mu.Unlock()
		wa.t.refs--
		if wa.t.refs == 0 {
			_ = wa.t.sub.Unsubscribe()
			delete(wa.w.turns, wa.key)
		}
	})
}
