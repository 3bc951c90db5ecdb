package client

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/schemas"
)

// pending collects the acks of publishes sent without waiting.
type pending struct {
	futures []jetstream.PubAckFuture
}

// wait returns the first failed publish, or nil when all were stored.
func (p *pending) wait(ctx context.Context) error {
	for _, f := range p.futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return fmt.Errorf("client: publish %s: %w", f.Msg().Subject, err)
		case <-ctx.Done():
			return fmt.Errorf("client: publish %s: %w", f.Msg().Subject, ctx.Err())
		}
	}
	return nil
}

func (c *Client) publish(ctx context.Context, subject, msgID, turn string, seq int, d schemas.Data) error {
	return c.send(ctx, nil, subject, msgID, turn, seq, d)
}

// send publishes an event and waits for its ack, or, with p, queues the
// ack in p without waiting.
func (c *Client) send(ctx context.Context, p *pending, subject, msgID, turn string, seq int, d schemas.Data) error {
	m, err := c.encode(subject, turn, seq, d)
	if err != nil {
		return err
	}
	return c.sendMsg(ctx, p, m, msgID)
}

// encode builds the message of an event of turn.
func (c *Client) encode(subject, turn string, seq int, d schemas.Data) (*nats.Msg, error) {
	h, body, err := schemas.Encode(schemas.Meta{Source: c.cfg.Source, Tenant: c.cfg.Tenant, Turn: turn, Seq: seq}, d)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return &nats.Msg{Subject: subject, Header: h, Data: body}, nil
}

// sendMsg publishes m and waits for its ack, or, with p, queues the ack in
// p without waiting. A message over the server's max_payload fails here,
// before anything is sent, in both cases (nats.ErrMaxPayload).
func (c *Client) sendMsg(ctx context.Context, p *pending, m *nats.Msg, msgID string) error {
	if p != nil {
		f, err := c.js.PublishMsgAsync(m, jetstream.WithMsgID(msgID))
		if err != nil {
			return fmt.Errorf("client: publish %s: %w", m.Subject, err)
		}
		p.futures = append(p.futures, f)
		return nil
	}
	if _, err := c.js.PublishMsg(ctx, m, jetstream.WithMsgID(msgID)); err != nil {
		return fmt.Errorf("client: publish %s: %w", m.Subject, err)
	}
	return nil
}
