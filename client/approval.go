package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// Approvals calls fn with each approval request of a turn until stop is
// called: a call that a permission rule asks about waits until Decide
// answers it (or its timeout refuses it). Requests made before Approvals
// was called and not decided yet are read from the approval stream and
// delivered too, so a request is never missed because the feed started
// late; each request reaches fn once. fn runs on the subscription's
// goroutine: it should hand the request on, not wait there for a person's
// answer. As with Progress, a call of fn under way may outlast stop.
func (c *Client) Approvals(turn string, fn func(*schemas.ApprovalRequest)) (stop func(), err error) {
	var mu sync.Mutex
	seen := map[int]bool{}
	once := func(r *schemas.ApprovalRequest) {
		mu.Lock()
		dup := seen[r.Seq]
		seen[r.Seq] = true
		mu.Unlock()
		if !dup {
			fn(r)
		}
	}
	if fn == nil {
		once = nil // subscribe refuses a nil callback with its own error
	}
	stop, err = subscribe(c, "approvals", turn, c.cfg.Space.ApprovalRequests(c.cfg.Tenant, turn), once)
	if err != nil {
		return nil, err
	}
	if err := c.pendingApprovals(turn, once); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// catchUpWait bounds reading the requests stored before the subscription.
const catchUpWait = 10 * time.Second

// pendingApprovals delivers the turn's stored requests that have no
// decision yet.
func (c *Client) pendingApprovals(turn string, fn func(*schemas.ApprovalRequest)) error {
	ctx, cancel := context.WithTimeout(context.Background(), catchUpWait)
	defer cancel()
	for {
		err := c.readPending(ctx, turn, fn)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !readAgain(err) {
			return fmt.Errorf("client: approvals of turn %s: %w", turn, err)
		}
		// No reader answers for now (the stages starting or restarting):
		// asked again within the bound; fn drops what it has seen.
		select {
		case <-ctx.Done():
			return fmt.Errorf("client: approvals of turn %s: %w", turn, err)
		case <-time.After(catchUpPause):
		}
	}
}

// catchUpPause is the wait before the stored requests are read again.
const catchUpPause = 100 * time.Millisecond

// readPending reads the turn's stored requests once and delivers those
// that have no decision yet.
func (c *Client) readPending(ctx context.Context, turn string, fn func(*schemas.ApprovalRequest)) error {
	sp := c.cfg.Space
	stream := sp.ApprovalStream()
	return c.readAfter(ctx, subjects.ReadApprovals, turn, 0, func(m *stored) error {
		if _, copied := schemas.CopiedFrom(m.header, sp.ApprovalRequests(c.cfg.Tenant, turn)); copied {
			return nil // another tenant's message aimed here (schemas.CopiedFrom)
		}
		meta, data, err := schemas.Decode(m.header, m.data)
		r, ok := data.(*schemas.ApprovalRequest)
		if err != nil || !ok || !c.ours(meta, turn) {
			return nil
		}
		decision := sp.ApprovalDecision(c.cfg.Tenant, turn, r.Seq)
		d, err := c.lastMsg(ctx, stream, decision)
		if err == nil {
			if _, copied := schemas.CopiedFrom(d.header, decision); copied {
				err = jetstream.ErrMsgNotFound // a copy aimed there decides nothing
			}
		}
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			fn(r)
		case err != nil:
			return err
		}
		return nil
	})
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
