package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/internal/tracing"
	"github.com/toolwire/toolwire/schemas"
)

// ErrSlowDown is a publish the pipeline kept refusing until the context
// ended: its in stream holds as many events waiting for a router as it may
// (the routers are behind). Nothing of the refused event entered the
// pipeline; sending it again later is safe, as is sending the turn's
// accepted events again.
var ErrSlowDown = errors.New("client: the pipeline is behind (its in stream is full): slow down and send again")

// Back-off while the in stream is full: the producer waits, instead of the
// server's backlog or the client's buffers growing.
const (
	slowFirst = 5 * time.Millisecond
	slowMax   = 500 * time.Millisecond
)

// pending collects the acks of publishes sent without waiting.
type pending struct {
	futures []jetstream.PubAckFuture
}

// wait returns the first failed publish, or nil when all were stored. A
// publish refused because the in stream is full is sent again, waiting as
// sendMsg does.
func (p *pending) wait(ctx context.Context, c *Client) error {
	for _, f := range p.futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			if !jserr.Full(err) && !jserr.Unavailable(err) {
				return fmt.Errorf("client: publish %s: %w", f.Msg().Subject, err)
			}
			// The message carries its Nats-Msg-Id header already.
			if err := c.publishAgain(ctx, f.Msg(), err); err != nil {
				return err
			}
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
	m, err := c.encode(ctx, subject, turn, seq, d)
	if err != nil {
		return err
	}
	return c.sendMsg(ctx, p, m, msgID)
}

// encode builds the message of an event of turn. The event carries the
// trace context of the span in ctx, if any (the CloudEvents traceparent
// and tracestate extensions): the pipeline's spans of the call continue
// the caller's trace.
func (c *Client) encode(ctx context.Context, subject, turn string, seq int, d schemas.Data) (*nats.Msg, error) {
	meta := schemas.Meta{Source: c.cfg.Source, Tenant: c.cfg.Tenant, Turn: turn, Seq: seq}
	tracing.Carry(ctx, &meta)
	h, body, err := schemas.Encode(meta, d)
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
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	m.Header.Set(jetstream.MsgIDHeader, msgID)
	err := c.publishOnce(ctx, m)
	if jserr.Full(err) || jserr.Unavailable(err) {
		return c.publishAgain(ctx, m, err)
	}
	if err != nil {
		return fmt.Errorf("client: publish %s: %w", m.Subject, err)
	}
	return nil
}

// publishOnce sends m and waits for its ack, for at most one request's bound.
func (c *Client) publishOnce(ctx context.Context, m *nats.Msg) error {
	pctx, cancel := jserr.Bound(ctx)
	defer cancel()
	_, err := c.js.PublishMsg(pctx, m)
	return err
}

// failoverWait bounds how long a publish is sent again while JetStream is
// unavailable: a cluster's failover takes seconds, not minutes.
const failoverWait = time.Minute

// failoverStep is the pause between two tries of a publish while
// JetStream is unavailable.
const failoverStep = 250 * time.Millisecond

// publishAgain sends m again, with a growing pause, for as long as the in
// stream is full (or JetStream unavailable, for at most failoverWait) and
// ctx allows; refused is the refusal that brought it here. m carries its
// Nats-Msg-Id header, so a copy the server stored while its ack was lost
// is not stored twice.
func (c *Client) publishAgain(ctx context.Context, m *nats.Msg, refused error) error {
	pause := slowFirst
	giveUp := time.Now().Add(failoverWait)
	for {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			if jserr.Full(refused) {
				return fmt.Errorf("client: publish %s: %w (%w; the last refusal: %w)", m.Subject, ErrSlowDown, ctx.Err(), refused)
			}
			return fmt.Errorf("client: publish %s: %w (the last failure: %w)", m.Subject, ctx.Err(), refused)
		case <-t.C:
		}
		err := c.publishOnce(ctx, m)
		switch {
		case err == nil:
			return nil
		case jserr.Full(err):
			// Slowed down: the pause grows (below). A full stream
			// answers 503 too, so this comes before the failover.
		case jserr.Unavailable(err) && time.Now().Before(giveUp):
			// A failover: tried every quarter second, as the stages
			// do, so the publish goes through within a step of the
			// stream's return.
			refused, pause = err, failoverStep
			continue
		default:
			return fmt.Errorf("client: publish %s: %w", m.Subject, err)
		}
		refused = err
		pause = min(2*pause, slowMax)
	}
}
