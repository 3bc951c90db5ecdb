package main

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/health"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
)

// connStats is what /readyz and the connection counters read in a process
// that runs no stage: its one connection stands in for the stages'.
type connStats struct{ nc *nats.Conn }

func (c connStats) Stats() nats.Statistics { return c.nc.Stats() }
func (c connStats) Connected() bool        { return c.nc.IsConnected() }
func (c connStats) LateCalls() int64       { return 0 }

// readyAlone makes /readyz of a process that runs no stage mean what its
// users wait for: a NATS member is ready once its JetStream answers (not
// once the stages have provisioned their streams: in a cluster those
// stages wait for the member), an API in front of a pipeline once the
// pipeline's streams exist, since before then every upload would fail.
func readyAlone(hs *health.Server, dial pipeline.Dialer, api bool) (stop func(), err error) {
	nc, err := dial("toolwire-health")
	if err != nil {
		return nil, fmt.Errorf("serve: readiness: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("serve: readiness: %w", err)
	}
	hs.Ready(connStats{nc})
	hs.ReadyWhen(func(ctx context.Context) error {
		if api {
			return provision.Present(ctx, js, subjects.Default(), false, false, false)
		}
		if _, err := js.AccountInfo(ctx); err != nil {
			return fmt.Errorf("JetStream: %w", err)
		}
		return nil
	})
	return nc.Close, nil
}
