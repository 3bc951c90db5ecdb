package stage

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// lanes run handlers on n goroutines, the same key always on the same one:
// the messages of one turn in order, with fewer lease conflicts, while
// different turns run in parallel.
//
// With together set, a run of messages of one key that together accepts,
// queued one behind the other, is handed to run at once (runner.
// deliverTogether handles them concurrently: their lease updates meet in
// the store's combiner). A message together refuses stays a barrier: it
// starts after everything before it on its lane has finished.
type lanes struct {
	seed     maphash.Seed
	chans    []chan laneMsg
	together func(jetstream.Msg) bool
	wg       sync.WaitGroup
}

// laneMsg is a message with the key it was queued under.
type laneMsg struct {
	key     string
	m       jetstream.Msg
	attempt int
}

// maxTogether bounds a run handled at once.
const maxTogether = 64

// newLanes starts n lanes running h until close.
func newLanes(ctx context.Context, n, depth int, together func(jetstream.Msg) bool, h func(context.Context, jetstream.Msg, int), run func(context.Context, []laneMsg)) *lanes {
	if n <= 0 {
		n = 1
	}
	l := &lanes{seed: maphash.MakeSeed(), chans: make([]chan laneMsg, n), together: together}
	for i := range l.chans {
		ch := make(chan laneMsg, depth)
		l.chans[i] = ch
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.run(ctx, ch, h, run)
		}()
	}
	return l
}

// run is one lane: each message in turn, or a run of them at once.
func (l *lanes) run(ctx context.Context, ch chan laneMsg, h func(context.Context, jetstream.Msg, int), together func(context.Context, []laneMsg)) {
	var held *laneMsg
	for {
		var first laneMsg
		if held != nil {
			first, held = *held, nil
		} else {
			var ok bool
			if first, ok = <-ch; !ok {
				return
			}
		}
		if l.together == nil || !l.together(first.m) {
			h(ctx, first.m, first.attempt)
			continue
		}
		group := []laneMsg{first}
	gather:
		for len(group) < maxTogether {
			select {
			case next, ok := <-ch:
				if !ok {
					break gather
				}
				if next.key != first.key || !l.together(next.m) {
					held = &next
					break gather
				}
				group = append(group, next)
			default:
				break gather
			}
		}
		if len(group) == 1 {
			h(ctx, first.m, first.attempt)
			continue
		}
		together(ctx, group)
	}
}

// submit queues m on the lane of key; it blocks when that lane is full,
// which is the back-pressure the consumer's MaxAckPending expects.
func (l *lanes) submit(key string, m jetstream.Msg, attempt int) {
	l.chans[maphash.String(l.seed, key)%uint64(len(l.chans))] <- laneMsg{key: key, m: m, attempt: attempt}
}

// close stops accepting messages and waits for the queued ones.
func (l *lanes) close() {
	for _, ch := range l.chans {
		close(ch)
	}
	l.wg.Wait()
}

// A pull request lives pullExpiry and the server confirms it with a
// heartbeat every pullHeartbeat while it waits. A pull can be lost without
// the connection breaking — the consumer's leader was on a cluster member
// that died, or the consumer was just created and had no leader yet — and
// the client notices only when two heartbeats are missed: with the
// library's defaults (30 s and 15 s) a stage then stood idle for 30 s.
// A pull made again while the consumer still elects its leader is lost
// too, so the second pull after the election comes within a second.
const (
	pullExpiry    = 3 * time.Second
	pullHeartbeat = 500 * time.Millisecond
)

// consume runs fn for every message of cons until ctx is done, then stops
// the consume context and returns. Errors of the pull are logged, not fatal:
// the client re-pulls by itself.
func consume(ctx context.Context, cons jetstream.Consumer, batch int, log *slog.Logger, fn func(jetstream.Msg)) error {
	cc, err := cons.Consume(fn,
		jetstream.PullMaxMessages(batch),
		jetstream.PullExpiry(pullExpiry),
		jetstream.PullHeartbeat(pullHeartbeat),
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
