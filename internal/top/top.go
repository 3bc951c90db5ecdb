// Package top reads what a toolwire fleet is doing right now, for `toolwire
// top`: the turns in the lease bucket and their calls, the calls running on
// each worker, each stage consumer's backlog, the dead letters and the
// approvals waiting for a person.
package top

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// maxTurns bounds the leases kept in memory, whatever the bucket holds:
// the view is for people, and a bucket of a million turns must not take
// this process's memory with it.
const maxTurns = 100_000

// Watcher follows the lease bucket and reads the rest on demand.
type Watcher struct {
	js    jetstream.JetStream
	space subjects.Space
	w     jetstream.KeyWatcher

	mu      sync.Mutex
	leases  map[string]*schemas.Lease // by lease key
	dropped map[string]bool           // keys left out past maxTurns
	synced  chan struct{}             // closed once the bucket's values are read
	err     error
}

// Watch starts following the lease bucket of space.
func Watch(ctx context.Context, js jetstream.JetStream, space subjects.Space) (*Watcher, error) {
	kv, err := js.KeyValue(ctx, space.LeaseBucket())
	if err != nil {
		return nil, fmt.Errorf("top: lease bucket %s: %w (is a pipeline served there?)", space.LeaseBucket(), err)
	}
	kw, err := kv.WatchAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("top: watch %s: %w", space.LeaseBucket(), err)
	}
	w := &Watcher{js: js, space: space, w: kw, leases: map[string]*schemas.Lease{}, dropped: map[string]bool{}, synced: make(chan struct{})}
	go w.run()
	return w, nil
}

// Close stops following the bucket.
func (w *Watcher) Close() { _ = w.w.Stop() }

func (w *Watcher) run() {
	synced := false
	for e := range w.w.Updates() {
		if e == nil {
			if !synced {
				synced = true
				close(w.synced)
			}
			continue
		}
		w.mu.Lock()
		switch e.Operation() {
		case jetstream.KeyValueDelete, jetstream.KeyValuePurge:
			delete(w.leases, e.Key())
			delete(w.dropped, e.Key())
		default:
			l, err := schemas.DecodeLease(e.Value())
			switch {
			case err != nil:
				// A lease that does not decode is shown as nothing rather
				// than stopping the view.
			case len(w.leases) >= maxTurns && w.leases[e.Key()] == nil:
				// Counted once per key, and only up to a second bound:
				// past it the count says "at least".
				if len(w.dropped) < maxTurns {
					w.dropped[e.Key()] = true
				}
			default:
				w.leases[e.Key()] = l
			}
		}
		w.mu.Unlock()
	}
	if !synced {
		w.mu.Lock()
		w.err = errors.New("top: the lease watch ended before the bucket was read")
		w.mu.Unlock()
		close(w.synced)
	}
}

// Snapshot is what the fleet is doing at one moment.
func (w *Watcher) Snapshot(ctx context.Context, opts Options) (*Snapshot, error) {
	select {
	case <-w.synced:
	case <-ctx.Done():
		return nil, fmt.Errorf("top: reading the lease bucket: %w", ctx.Err())
	}
	w.mu.Lock()
	if w.err != nil {
		w.mu.Unlock()
		return nil, w.err
	}
	s := summarize(w.leases, opts)
	s.TurnsLeftOut += len(w.dropped)
	w.mu.Unlock()
	var errs []error
	var err error
	if s.Consumers, err = consumers(ctx, w.js, w.space); err != nil {
		errs = append(errs, err)
	}
	if s.DeadLetters, err = deadLetters(ctx, w.js, w.space); err != nil {
		errs = append(errs, err)
	}
	if s.ApprovalsWaiting, err = approvalsWaiting(ctx, w.js, w.space, s.open); err != nil {
		errs = append(errs, err)
	}
	return s, errors.Join(errs...)
}

// splitKey is a lease key's tenant and turn.
func splitKey(key string) (tenant, turn string) {
	tenant, turn, _ = strings.Cut(key, ".")
	return tenant, turn
}
