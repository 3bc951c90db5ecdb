package client

import (
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/schemas"
)

// Progress calls fn with each of a turn's progress events as they happen
// (completion order, best effort) until stop is called. It is subscribed
// when it returns, so call it before submitting: progress is not stored.
// fn runs on the subscription's goroutine and must not block.
func (c *Client) Progress(turn string, fn func(*schemas.ToolProgress)) (stop func(), err error) {
	sub, err := c.nc.Subscribe(c.cfg.Space.Progress(c.cfg.Tenant, turn), func(m *nats.Msg) {
		if _, data, err := schemas.Decode(m.Header, m.Data); err == nil {
			if p, ok := data.(*schemas.ToolProgress); ok {
				fn(p)
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("client: progress of %s: %w", turn, err)
	}
	if err := c.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("client: progress of %s: %w", turn, err)
	}
	return func() { _ = sub.Unsubscribe() }, nil
}
