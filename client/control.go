package client

import (
	"context"
	"fmt"
	"io"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// Cancel interrupts a turn as its user would: calls not started never run,
// running calls of tools that allow it are stopped, and each gets the
// rejection result; the turn still completes.
func (c *Client) Cancel(ctx context.Context, turn, reason string) error {
	return c.publish(ctx, c.cfg.Space.In(c.cfg.Tenant, turn, subjects.KindCancel), subjects.InMsgID(c.cfg.Tenant, turn, subjects.KindCancel), turn, -1, &schemas.TurnCancel{Reason: reason})
}

// Discard gives up a turn whose stream failed (it will be retried): every
// unfinished call is stopped or never started, and the turn is closed at
// the calls seen so far.
func (c *Client) Discard(ctx context.Context, turn, reason string) error {
	return c.publish(ctx, c.cfg.Space.In(c.cfg.Tenant, turn, subjects.KindDiscard), subjects.InMsgID(c.cfg.Tenant, turn, subjects.KindDiscard), turn, -1, &schemas.TurnDiscard{Reason: reason})
}

// Blob reads the full content of an oversize result (its BlobRef).
func (c *Client) Blob(ctx context.Context, ref string) ([]byte, error) {
	obs, err := c.js.ObjectStore(ctx, c.cfg.Space.BlobBucket())
	if err != nil {
		return nil, fmt.Errorf("client: blob store: %w", err)
	}
	r, err := obs.Get(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("client: blob %s: %w", ref, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("client: blob %s: %w", ref, err)
	}
	return b, nil
}

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

// Approvals calls fn with each approval request of a turn: a call that a
// permission rule asks about waits until Decide answers it (or its timeout
// refuses it). It is subscribed when it returns; requests made before are
// in the approval stream.
func (c *Client) Approvals(turn string, fn func(*schemas.ApprovalRequest)) (stop func(), err error) {
	sub, err := c.nc.Subscribe(c.cfg.Space.ApprovalRequests(c.cfg.Tenant, turn), func(m *nats.Msg) {
		if _, data, err := schemas.Decode(m.Header, m.Data); err == nil {
			if r, ok := data.(*schemas.ApprovalRequest); ok {
				fn(r)
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("client: approvals of %s: %w", turn, err)
	}
	if err := c.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("client: approvals of %s: %w", turn, err)
	}
	return func() { _ = sub.Unsubscribe() }, nil
}

// Decide answers the approval request of call seq: allow runs it, a refusal
// answers the model with reason.
func (c *Client) Decide(ctx context.Context, turn string, seq int, allow bool, reason string) error {
	return c.publish(ctx, c.cfg.Space.ApprovalDecision(c.cfg.Tenant, turn, seq), subjects.ApprovalMsgID(c.cfg.Tenant, turn, seq, "decision"),
		turn, seq, &schemas.ApprovalDecision{Seq: seq, Allow: allow, Reason: reason})
}
