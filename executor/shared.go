package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/subjects"
)

// Shared is what the workers of one process (and its router) share: the
// turns' leases as the process last saw them, and the watch that keeps
// them current. Stages given one Shared combine their writes of a turn's
// lease into one compare-and-set instead of racing each other's, and park
// on one subscription per turn. Stages in other processes still race;
// that is what the compare-and-set is for.
type Shared struct {
	nc      *nats.Conn
	store   *lease.Store
	watcher *lease.Watcher
}

// NewShared binds the leases of space on nc for the workers that will run
// on nc (leaseTTL 0: the default).
func NewShared(ctx context.Context, nc *nats.Conn, space subjects.Space, leaseTTL time.Duration) (*Shared, error) {
	if err := space.Check(); err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	store, err := lease.NewStore(ctx, js, space, leaseTTL)
	if err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	return &Shared{nc: nc, store: store, watcher: lease.NewWatcher(store)}, nil
}

// errSharedConn is a worker given a Shared bound on another connection: its
// lease reads and writes would not be ordered after its watch's
// subscription, which the Shared's cache relies on.
var errSharedConn = errors.New("Config.Shared was made on another connection than the stage's")

// Leases is the shared lease store, for a stage of the process running on
// nc (router.Config.Shared); another connection is refused.
func (s *Shared) Leases(nc *nats.Conn) (*lease.Store, error) {
	if s.nc != nc {
		return nil, errSharedConn
	}
	return s.store, nil
}
