package lease

import (
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/subjects"
)

// Watcher tells parked calls that their turn's lease changed. It uses one
// core subscription per watched turn on the key's KV subject, which sees
// every write as it is stored; unlike kv.Watch it creates no server-side
// consumer, so a worker can watch thousands of turns cheaply.
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
}

// NewWatcher returns a watcher on nc.
func NewWatcher(nc *nats.Conn, space subjects.Space) *Watcher {
	return &Watcher{nc: nc, space: space, turns: map[string]*watched{}}
}

// Watch starts watching a turn and returns a function giving the channel
// that is closed at the next change, and a release function. Call Watch
// before reading the lease, so no write between the read and the wait is
// missed.
func (w *Watcher) Watch(tenant, turn string) (next func() <-chan struct{}, release func(), err error) {
	key := w.space.LeaseKey(tenant, turn)
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.turns[key]
	if !ok {
		t = &watched{changed: make(chan struct{})}
		sub, err := w.nc.Subscribe(w.space.LeaseSubject(tenant, turn), func(*nats.Msg) {
			w.mu.Lock()
			close(t.changed)
			t.changed = make(chan struct{})
			w.mu.Unlock()
		})
		if err != nil {
			return nil, nil, fmt.Errorf("lease: watch %s: %w", key, err)
		}
		t.sub = sub
		w.turns[key] = t
	}
	t.refs++
	next = func() <-chan struct{} {
		w.mu.Lock()
		defer w.mu.Unlock()
		return t.changed
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			t.refs--
			if t.refs == 0 {
				_ = t.sub.Unsubscribe()
				delete(w.turns, key)
			}
		})
	}
	return next, release, nil
}
