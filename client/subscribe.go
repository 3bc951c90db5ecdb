package client

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/schemas"
)

// subscribe calls fn with every event of type T published on the turn's
// subject until stop is called; what names the feed in errors. Progress
// and Approvals are both such a feed: core NATS, nothing stored for the
// subscriber, so the subscription costs the server no state however many
// turns are followed. A message that does not decode, or is of another
// type, is dropped: the feed is for people watching, and one bad event
// must not end it.
func subscribe[T schemas.Data](c *Client, what, turn, subject string, fn func(T)) (stop func(), err error) {
	if err := checkTurn(what, turn); err != nil {
		return nil, err
	}
	if fn == nil {
		// Found now rather than as a panic on the subscription's goroutine.
		return nil, fmt.Errorf("client: %s of turn %s: %w", what, turn, errNilCallback)
	}
	sub, err := c.nc.Subscribe(subject, func(m *nats.Msg) {
		if _, copied := schemas.CopiedFrom(m.Header, m.Subject); copied {
			return // another tenant's message aimed here (schemas.CopiedFrom)
		}
		if meta, data, err := schemas.Decode(m.Header, m.Data); err == nil && c.ours(meta, turn) {
			if v, ok := data.(T); ok {
				fn(v)
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("client: %s of turn %s: %w", what, turn, err)
	}
	// The server knows the subscription once the flush returns: an event
	// published after this function returns reaches fn.
	if err := c.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("client: %s of turn %s: %w", what, turn, err)
	}
	return func() { drain(sub) }, nil
}

// ours reports whether an event with meta is of the client's tenant and
// of turn, as far as it says. A stored message of another tenant can reach
// a subscription on this one's subject: the JetStream API answers a direct
// get, which a tenant may make of its own subjects, on whatever reply
// subject the request names, and the server checks no permission on it.
func (c *Client) ours(meta schemas.Meta, turn string) bool {
	return (meta.Tenant == "" || meta.Tenant == c.cfg.Tenant) && (meta.Turn == "" || meta.Turn == turn)
}

// drainWait bounds how long stop waits for the events already received.
const drainWait = time.Second

// drain stops sub after fn has had every event the connection already
// received: an event published before the turn's last result arrives
// before it, but runs on another goroutine than the result's reader, so a
// caller that stops at turn_done would otherwise lose it.
func drain(sub *nats.Subscription) {
	if err := sub.Drain(); err != nil {
		_ = sub.Unsubscribe()
		return
	}
	deadline := time.Now().Add(drainWait)
	for sub.IsValid() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if sub.IsValid() {
		_ = sub.Unsubscribe()
	}
}

// errNilCallback is returned for a feed asked for with no function to call.
var errNilCallback = errors.New("no function to call with its events")
