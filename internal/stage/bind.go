package stage

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/subjects"
)

// Bound is what every stage binds on its connection: JetStream, the turns'
// leases and its durable consumer.
type Bound struct {
	JS       jetstream.JetStream
	Leases   *lease.Store
	Consumer jetstream.Consumer
}

// Binding says which consumer a stage binds. An empty Filter is the whole
// stream: the interest streams' consumers have none, as provisioning makes
// them before their streams have their subjects.
type Binding struct {
	Stream, Name, Filter string
	Config               provision.ConsumerConfig
	// LeaseTTL is the leases' idle lifetime (0: lease.DefaultTTL).
	LeaseTTL time.Duration
	// Leases, when set, is a store the stage shares with others of its
	// process; else Bind makes one.
	Leases *lease.Store
}

// CheckPool reports the first setting a stage that hosts a pool's tools
// (router, executor) cannot work with: the space, the tools, the pool name.
func CheckPool(space subjects.Space, hasTools bool, pool string) error {
	if err := space.Check(); err != nil {
		return err
	}
	if !hasTools {
		return errors.New("no tools (Config.Tools is nil)")
	}
	return subjects.CheckToken("pool", pool)
}

// Bind binds a stage on nc. The consumer exists when Bind returns, so a
// started pipeline can be inspected and fed at once.
func Bind(ctx context.Context, nc *nats.Conn, space subjects.Space, b Binding) (Bound, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return Bound{}, err
	}
	leases := b.Leases
	if leases == nil {
		if leases, err = lease.NewStore(ctx, js, space, b.LeaseTTL); err != nil {
			return Bound{}, err
		}
	}
	cons, err := provision.Consumer(ctx, js, b.Stream, b.Name, b.Filter, b.Config)
	if err != nil {
		return Bound{}, err
	}
	return Bound{JS: js, Leases: leases, Consumer: cons}, nil
}
