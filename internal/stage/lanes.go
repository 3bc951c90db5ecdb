package stage

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// lanes run handlers on n goroutines, the same key always on the same one:
// the messages of one turn in order, with fewer lease conflicts, while
// different turns run in parallel.
type lanes struct {
	seed  maphash.Seed
	chans []chan jetstream.Msg
	wg    sync.WaitGroup
}

// newLanes starts n lanes running h until close.
func newLanes(ctx context.Context, n, depth int, h func(context.Context, jetstream.Msg)) *lanes {
	if n <= 0 {
		n = 1
	}
	l := &lanes{seed: maphash.MakeSeed(), chans: make([]chan jetstream.Msg, n)}
	for i := range l.chans {
		ch := make(chan jetstream.Msg, depth)
		l.chans[i] = ch
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for m := range ch {
				h(ctx, m)
			}
		}()
	}
	return l
}

// submit queues m on the lane of key; it blocks when that lane is full,
// which is the back-pressure the consumer's MaxAckPending expects.
func (l *lanes) submit(key string, m jetstream.Msg) {
	l.chans[maphash.String(l.seed, key)%uint64(len(l.chans))] <- m
}

// close stops accepting messages and waits for the queued ones.
func (l *lanes) close() {
	for _, ch := range l.chans {
		close(ch)
	}
	l.wg.Wait()
}

// consume runs fn for every message of cons until ctx is done, then stops
// the consume context and returns. Errors of the pull are logged, not fatal:
// the client re-pulls by itself.
func consume(ctx context.Context, cons jetstream.Consumer, batch int, log *slog.Logger, fn func(jetstream.Msg)) error {
	cc, err := cons.Consume(fn,
		jetstream.PullMaxMessages(batch),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if ctx.Err() == nil && !errors.Is(err, jetstream.ErrNoHeartbeat) {
				log.Debug("consume", "err", err)
			}
		}))
	if err != nil {
		return fmt.Errorf("stage: consume: %w", err)
	}
	<-ctx.Done()
	cc.Stop()
	<-cc.Closed()
	return nil
}
