package executor

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// reconnectGrace is how long after this worker's connection came back it
// waits before taking over a claim that ran out: when the server was away,
// the worker that holds the claim was cut off too, may well be alive with
// its call finished and its result in hand, and needs a moment to
// reconnect (a quarter second plus up to a second of jitter) and renew
// the claim or publish. Taken over at once, its call would be answered
// "outcome unknown", or run again, while its real result waits.
const reconnectGrace = 3 * time.Second

// comeback tracks when a connection last reconnected, by watching its
// reconnect count (the connection's one reconnect handler is its owner's
// to set, not a worker's).
type comeback struct {
	nc   *nats.Conn
	seen atomic.Uint64
	at   atomic.Int64 // Unix ms of the last reconnect seen, 0: none
	down atomic.Int64 // Unix ms the connection was first seen down, 0: up
}

func newComeback(nc *nats.Conn) *comeback {
	c := &comeback{nc: nc}
	c.seen.Store(nc.Stats().Reconnects)
	return c
}

// watch notices reconnects within a quarter second, until ctx is done.
func (c *comeback) watch(ctx context.Context) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.check(time.Now())
		}
	}
}

func (c *comeback) check(now time.Time) {
	if n := c.nc.Stats().Reconnects; n != c.seen.Load() {
		c.seen.Store(n)
		c.at.Store(now.UnixMilli())
	}
	switch {
	case c.nc.IsConnected():
		c.down.Store(0)
	case c.down.Load() == 0:
		c.down.Store(now.UnixMilli())
	}
}

// cutOff is how long the connection has been down (0: it is up), as last
// watched.
func (c *comeback) cutOff(now time.Time) time.Duration {
	d := c.down.Load()
	if d == 0 {
		return 0
	}
	return now.Sub(time.UnixMilli(d))
}

// graceUntil is when the grace after the last reconnect ends (Unix ms),
// and whether now is within it.
func (c *comeback) graceUntil(now time.Time) (int64, bool) {
	c.check(now)
	at := c.at.Load()
	if at == 0 {
		return 0, false
	}
	end := at + reconnectGrace.Milliseconds()
	return end, now.UnixMilli() < end
}
