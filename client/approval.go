package client

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

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
