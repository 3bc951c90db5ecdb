package provision

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/subjects"
)

// Present checks that the pipeline's streams exist, and the consumers of
// the stages named (router, executor of the default pool, reorder): what
// a readiness probe asks. The error names the first one missing.
func Present(ctx context.Context, js jetstream.JetStream, sp subjects.Space, router, executor, reorder bool) error {
	for _, name := range []string{sp.InStream(), sp.ExecStream(), sp.ResultStream(), sp.OutStream(), sp.DLQStream(), sp.LeaseStream()} {
		if _, err := js.Stream(ctx, name); err != nil {
			return fmt.Errorf("stream %s: %w", name, err)
		}
	}
	for _, c := range []struct {
		want            bool
		stream, durable string
	}{
		{router, sp.InStream(), sp.RouterConsumer()},
		{executor, sp.ExecStream(), sp.ExecConsumer(subjects.DefaultPool)},
		{reorder, sp.ResultStream(), sp.ReorderConsumer()},
	} {
		if !c.want {
			continue
		}
		if _, err := js.Consumer(ctx, c.stream, c.durable); err != nil {
			return fmt.Errorf("consumer %s on %s: %w", c.durable, c.stream, err)
		}
	}
	return nil
}
