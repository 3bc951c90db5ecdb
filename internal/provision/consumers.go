package provision

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/subjects"
)

// StageStreams are the streams each stage consumes, by stage name.
func StageStreams(sp subjects.Space) []struct{ Stage, Stream string } {
	return []struct{ Stage, Stream string }{
		{subjects.StageRouter, sp.InStream()}, {subjects.StageExecutor, sp.ExecStream()}, {subjects.StageReorder, sp.ResultStream()},
	}
}

// EachStageConsumer calls fn with the info of every consumer of the
// stages' streams; a stream or listing that fails is reported and the
// others are still read.
func EachStageConsumer(ctx context.Context, js jetstream.JetStream, sp subjects.Space, fn func(stage, stream string, ci *jetstream.ConsumerInfo)) error {
	var errs []error
	for _, st := range StageStreams(sp) {
		s, err := js.Stream(ctx, st.Stream)
		if err != nil {
			errs = append(errs, fmt.Errorf("stream %s: %w", st.Stream, err))
			continue
		}
		infos := s.ListConsumers(ctx)
		for ci := range infos.Info() {
			fn(st.Stage, st.Stream, ci)
		}
		if err := infos.Err(); err != nil {
			errs = append(errs, fmt.Errorf("consumers of %s: %w", st.Stream, err))
		}
	}
	return errors.Join(errs...)
}
