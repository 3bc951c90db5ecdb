package executor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/leaderget"
	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// DefaultApprovalTimeout is how long a call waits for its human's decision.
const DefaultApprovalTimeout = 5 * time.Minute

// permit applies the permission policy to a claimed call. It returns the
// input to run with, or the text of the refusal. An ask publishes an
// approval request and waits for the decision; no decision in time is a
// refusal.
func (e *Executor) permit(ctx context.Context, c *call, tc tool.TurnContext) (input []byte, refusal string, err error) {
	d := e.cfg.Policy.Check(c.p.Tenant, c.t, c.input(), tool.PermissionContext{Mode: tc.PermissionMode, WorkDir: tc.WorkDir})
	input = c.input()
	if len(d.UpdatedInput) > 0 {
		input = d.UpdatedInput
	}
	switch d.Behavior {
	case tool.Allow:
		return input, "", nil
	case tool.Deny:
		return nil, d.Reason, nil
	}
	dec, err := e.askApproval(ctx, c, d.Reason)
	if err != nil {
		return nil, "", err
	}
	if dec == nil {
		return nil, texts.ApprovalTimedOut(c.t.Name(), e.cfg.ApprovalTimeout), nil
	}
	if !dec.Allow {
		return nil, texts.Refused(c.t.Name(), dec.Reason), nil
	}
	return input, "", nil
}

// askApproval publishes the call's approval request (once: a redelivered
// call finds its earlier decision) and waits for the decision; nil means
// none came in time.
func (e *Executor) askApproval(ctx context.Context, c *call, reason string) (*schemas.ApprovalDecision, error) {
	sp := e.cfg.Space
	seq := c.d.Seq
	decisionSubject := sp.ApprovalDecision(c.p.Tenant, c.p.Turn, seq)
	decisions := make(chan *nats.Msg, 4)
	sub, err := e.nc.ChanSubscribe(decisionSubject, decisions)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	if err := e.nc.Flush(); err != nil {
		return nil, err
	}
	// From the leader: a replica behind it could miss a decision made
	// before the subscription, which would then never come.
	stream := leaderget.New(e.js, sp, sp.ApprovalStream())
	if raw, err := stream.GetLastMsgForSubject(ctx, decisionSubject); err == nil {
		d, err := decodeDecision(raw.Header, raw.Data, decisionSubject, c)
		if err == nil {
			return d, nil
		}
		// A copy stored there is no decision: wait for the human's.
		e.cfg.Log.Warn("executor: ignoring a stored approval decision", "subject", decisionSubject, "err", err)
	} else if !errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, err
	}
	req := &schemas.ApprovalRequest{Seq: seq, ToolUseID: c.d.ToolUseID, Tool: c.t.Name(), Input: c.d.Input, Reason: reason}
	h, body, err := schemas.Encode(schemas.Meta{Source: e.cfg.Source, Tenant: c.p.Tenant, Turn: c.p.Turn, Seq: seq}, req)
	if err != nil {
		return nil, err
	}
	_, err = e.js.PublishMsg(ctx, &nats.Msg{Subject: sp.ApprovalRequest(c.p.Tenant, c.p.Turn, seq), Header: h, Data: body},
		jetstream.WithMsgID(subjects.ApprovalMsgID(c.p.Tenant, c.p.Turn, seq, "request")))
	if err != nil {
		return nil, fmt.Errorf("executor: approval request: %w", err)
	}
	e.publishProgress(ctx, c, fmt.Sprintf("%s is waiting for approval (%s)", activity(c), reason))
	timer := time.NewTimer(e.cfg.ApprovalTimeout)
	defer timer.Stop()
	for {
		select {
		case m := <-decisions:
			d, err := decodeDecision(m.Header, m.Data, decisionSubject, c)
			if err != nil {
				e.cfg.Log.Warn("executor: ignoring a bad approval decision", "subject", m.Subject, "err", err)
				continue
			}
			return d, nil
		case <-timer.C:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// decodeDecision reads the decision of call c found on subject; another
// turn's, or a copy of a message stored elsewhere (schemas.OwnedBy: another
// tenant's own decision, aimed here by a direct get), is refused.
func decodeDecision(h nats.Header, body []byte, subject string, c *call) (*schemas.ApprovalDecision, error) {
	if !schemas.OwnedBy(h, subject, c.p.Tenant, c.p.Turn) {
		return nil, fmt.Errorf("not a decision of this turn made on %s (another turn's, or a copy of a message stored elsewhere)", subject)
	}
	meta, data, err := schemas.Decode(h, body)
	if err != nil {
		return nil, err
	}
	d, ok := data.(*schemas.ApprovalDecision)
	if !ok {
		return nil, fmt.Errorf("%s is not an approval decision", data.EventType())
	}
	if meta.Seq != c.d.Seq || d.Seq != c.d.Seq {
		return nil, fmt.Errorf("the decision of call %d (ce-seq %d), not of call %d", d.Seq, meta.Seq, c.d.Seq)
	}
	return d, nil
}
