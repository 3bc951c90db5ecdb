package client

import (
	"context"

	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// Approvals calls fn with each approval request of a turn until stop is
// called: a call that a permission rule asks about waits until Decide
// answers it (or its timeout refuses it). It is subscribed when it
// returns, so call it before submitting: a request made before is kept in
// the approval stream but not delivered here. fn runs on the
// subscription's goroutine: it should hand the request on, not wait there
// for a person's answer. As with Progress, a call of fn under way may
// outlast stop.
func (c *Client) Approvals(turn string, fn func(*schemas.ApprovalRequest)) (stop func(), err error) {
	return subscribe(c, "approvals", turn, c.cfg.Space.ApprovalRequests(c.cfg.Tenant, turn), fn)
}

// Decide answers the approval request of call seq: allow runs it, a refusal
// answers the model with reason.
func (c *Client) Decide(ctx context.Context, turn string, seq int, allow bool, reason string) error {
	if err := checkTurn("decide", turn); err != nil {
		return err
	}
	return c.publish(ctx, c.cfg.Space.ApprovalDecision(c.cfg.Tenant, turn, seq), subjects.ApprovalMsgID(c.cfg.Tenant, turn, seq, "decision"),
		turn, seq, &schemas.ApprovalDecision{Seq: seq, Allow: allow, Reason: reason})
}
