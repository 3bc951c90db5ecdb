package loadtest

import (
	"context"
	"time"

	"github.com/toolwire/toolwire/client"
)

// The modes of a run (Config.Mode).
const (
	// ModeStreaming publishes each call the moment its block completes,
	// paced over the stream time: the pipeline starts it while the model
	// is still streaming.
	ModeStreaming = "streaming"
	// ModeWaitForEnd holds the turn's calls in the load generator until
	// the stream has ended, then publishes them together, as an executor
	// that waits for the end of the stream would run them.
	ModeWaitForEnd = "wait-for-end"
)

// publishHeld is the wait-for-end publish: the stream is paced as in
// streaming mode and each block's completion is recorded in pubAt as it
// happens, but the calls are held until the stream's end, then submitted
// as a whole turn (SubmitCalls). e2e, first result and turn time are thus
// counted from the same moments as in streaming mode: when each block
// completed, and the stream's start.
func (t *target) publishHeld(ctx context.Context, id string, calls []client.Call, opts client.TurnOptions, stream time.Duration, pubAt []time.Time) error {
	t0 := time.Now()
	for i := range calls {
		if !pace(ctx, t0, stream, i, len(calls)) {
			clear(pubAt)
			return ctx.Err()
		}
		pubAt[i] = time.Now()
	}
	if !pace(ctx, t0, stream, len(calls), len(calls)) {
		clear(pubAt)
		return ctx.Err()
	}
	return t.cl.SubmitCalls(ctx, id, calls, opts)
}
