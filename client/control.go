package client

import (
	"context"

	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// Cancel interrupts a turn as its user would: calls not started never run,
// running calls of tools that allow it are stopped, and each gets the
// rejection result; the turn still completes.
func (c *Client) Cancel(ctx context.Context, turn, reason string) error {
	if err := checkTurn("cancel", turn); err != nil {
		return err
	}
	return c.publish(ctx, c.cfg.Space.In(c.cfg.Tenant, turn, subjects.KindCancel), subjects.InMsgID(c.cfg.Tenant, turn, subjects.KindCancel), turn, -1, &schemas.TurnCancel{Reason: reason})
}

// Discard gives up a turn whose stream failed (it will be retried): every
// unfinished call is stopped or never started, and the turn is closed at
// the calls seen so far.
func (c *Client) Discard(ctx context.Context, turn, reason string) error {
	if err := checkTurn("discard", turn); err != nil {
		return err
	}
	return c.publish(ctx, c.cfg.Space.In(c.cfg.Tenant, turn, subjects.KindDiscard), subjects.InMsgID(c.cfg.Tenant, turn, subjects.KindDiscard), turn, -1, &schemas.TurnDiscard{Reason: reason})
}
