package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/coercion"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/internal/tracing"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// use routes one call or answers it with an error result.
func (r *Router) use(ctx context.Context, p subjects.Parsed, meta schemas.Meta, u *schemas.ToolUse) error {
	if !u.Complete {
		why := u.Error
		if why == "" {
			why = texts.StreamEnded
		}
		return r.reject(ctx, p, u, rejection{why: texts.Incomplete(why)})
	}
	rt, why := r.resolve(ctx, u.Name)
	if why != "" {
		return r.reject(ctx, p, u, rejection{why: why})
	}
	args, repaired := json.RawMessage(u.Input), false
	if len(args) == 0 {
		var err error
		args, repaired, err = coercion.ParseRaw(u.RawInput)
		if err != nil {
			return r.reject(ctx, p, u, rt.failure(texts.InvalidArguments(err.Error()), nil))
		}
	}
	applied, err := rt.schema.Apply(args)
	if err != nil {
		why := texts.InvalidArguments(err.Error())
		var ve *coercion.ValidationError
		if errors.As(err, &ve) {
			why = err.Error()
		}
		// The input as written names the call.
		return r.reject(ctx, p, u, rt.failure(why, args))
	}
	args = applied
	pool := rt.pool
	halted, late := "", ""
	written, rev, ok, err := r.updateRev(ctx, p, u, func(l *schemas.Lease) error {
		halted, late = "", ""
		if late = pastEnd(l, u.Seq); late != "" {
			return lease.ErrNoChange
		}
		counted := countTurn(l, u)
		if c := l.Peek(u.Seq); c != nil && c.State != schemas.CallUnknown {
			// A redelivery: the call is registered; only the dispatch
			// publish below may still be missing (it is idempotent).
			return unlessCounted(counted)
		}
		if text, ok := lease.Halted(l, u.Seq); ok {
			// The turn was stopped before this call arrived: it never runs
			// (reject records it, and the count with it).
			halted = text
			return unlessCounted(counted)
		}
		if u.MaxConcurrency > 0 {
			// The turn's limit rides on every tool_use; the lease may have
			// been made first by the turn's end (another router) with the
			// default. No call can run before its own tool_use is
			// registered here, so the limit is in place before any starts.
			l.MaxConcurrency = u.MaxConcurrency
		}
		c := l.Call(u.Seq)
		c.State, c.Tool, c.Pool = schemas.CallRouted, rt.name, pool
		return nil
	})
	if !ok {
		return err
	}
	if late != "" {
		return r.answerLate(ctx, p, u, late)
	}
	if halted != "" {
		return r.reject(ctx, p, u, rejection{why: halted, now: true})
	}
	d := &schemas.Dispatch{Seq: u.Seq, ToolUseID: u.ToolUseID, Tool: rt.name, Input: schemas.RawJSON(args), Pool: pool, Repaired: repaired, Calls: max(written.Total, 0)}
	if d.Lease = lease.Snapshot(written); d.Lease != nil {
		d.LeaseRev = rev
	}
	if err := r.publishUsed(ctx, r.cfg.Space.Exec(p.Tenant, pool, p.Turn), "", p, meta, u.Seq, d); err != nil {
		return err
	}
	r.cfg.Hooks.OnCall(stage.CallEvent{Stage: subjects.StageRouter, Tenant: p.Tenant, Tool: rt.name, Outcome: "routed"})
	return nil
}

// countTurn gives the turn the count its call carries (ToolUse.Calls),
// when the turn has none yet; it reports whether it did. The first count
// holds: a turn_end or another call that disagrees later changes nothing.
func countTurn(l *schemas.Lease, u *schemas.ToolUse) bool {
	if u.Calls <= 0 || l.Total >= 0 {
		return false
	}
	l.Total = u.Calls
	return true
}

// unlessCounted is a mutator's "no change" unless countTurn changed the lease.
func unlessCounted(counted bool) error {
	if counted {
		return nil
	}
	return lease.ErrNoChange
}

// route is where a call of a tool goes and how its input is checked.
type route struct {
	name            string
	pool            string
	schema          *coercion.Schema
	cancelsSiblings bool
	// activity names a call of the tool for people.
	activity func(json.RawMessage) string
}

// failure is the rejection of a call whose input the tool cannot take: the
// call's own failure, so a tool that cancels its siblings on error does so
// here too — at the call's place in the turn. args is the input as far as
// it parsed (nil when it did not), for naming the call.
func (rt route) failure(why string, args json.RawMessage) rejection {
	rj := rejection{why: why}
	if rt.cancelsSiblings {
		rj.abort = texts.Sibling(rt.activity(args))
	}
	return rj
}

// resolve finds a tool: one this router hosts, else one a remote pool's
// live workers advertise. why is the answer to a call that cannot go
// anywhere.
func (r *Router) resolve(ctx context.Context, name string) (rt route, why string) {
	if t, ok := r.cfg.Tools.Lookup(name); ok {
		return route{name: t.Name(), pool: r.cfg.Pool, schema: r.schemas[t.Name()], cancelsSiblings: t.CancelsSiblings(), activity: t.Activity}, ""
	}
	remote, gone := r.catalog.lookup(name)
	if remote == nil && !gone {
		sp := r.cfg.Space
		r.catalog.refresh(ctx, r.adStream, sp.ToolSubjects(name), sp.ToolSubjectPrefix())
		remote, gone = r.catalog.lookup(name)
	}
	switch {
	case remote != nil:
		name := remote.ad.Name
		activity := func(in json.RawMessage) string { return tool.DefaultActivity(name, in) }
		return route{name: name, pool: remote.ad.Pool, schema: remote.schema, cancelsSiblings: remote.ad.CancelsSiblings, activity: activity}, ""
	case gone:
		return route{}, texts.NoWorker(name)
	}
	return route{}, texts.NoSuchTool(name)
}

// rejection is how the router answers a call it will not dispatch.
type rejection struct {
	// why is the call's result.
	why string
	// abort is the sibling-cancel text the call's failure sets when its
	// place in the turn comes; empty when it cancels nothing.
	abort string
	// now: the call is done at once, as the turn already stopped it.
	// Otherwise it is an unsafe call that fails at its place: later calls
	// wait for every earlier call, and its failure reaches no call before
	// it (lease.Settle).
	now bool
}

// reject answers a call that will not run. The lease records the call
// first, so that a call past the turn's end is answered as late instead;
// then the result is published. A crash in between redelivers the event:
// the lease is recorded already and the publish happens then (nothing
// reads a rejected call's result but reorder, which waits for it).
//
// When the turn's count is known and the call is within it, the answer
// goes first instead: it can no longer turn out late, and recording the
// call may complete the turn, whose lease then lives only
// lease.FinishedTTL, less than a redelivery takes. With no result stored,
// the redelivered event would find nothing to tell that the turn is over:
// it would make a new lease, which for a call the turn had stopped does
// not know that, and the call would run.
func (r *Router) reject(ctx context.Context, p subjects.Parsed, u *schemas.ToolUse, rj rejection) error {
	r.cfg.Hooks.OnCall(stage.CallEvent{Stage: subjects.StageRouter, Tenant: p.Tenant, Tool: u.Name, Outcome: "rejected"})
	// The lease this process last saw, the one that found the call
	// stopped among them: a count never changes once set.
	total := r.store.KnownTotal(p.Tenant, p.Turn)
	first := total > 0 && u.Seq < total
	if first {
		if err := r.publishResult(ctx, p, u, rj.why, false, total); err != nil {
			return err
		}
	}
	late := ""
	l, ok, err := r.update(ctx, p, u, func(l *schemas.Lease) error {
		if late = pastEnd(l, u.Seq); late != "" {
			return lease.ErrNoChange
		}
		counted := countTurn(l, u)
		if c := l.Peek(u.Seq); c != nil && c.State != schemas.CallUnknown {
			// Recorded already (a redelivery), or routed by a good copy.
			return unlessCounted(counted)
		}
		if u.MaxConcurrency > 0 {
			l.MaxConcurrency = u.MaxConcurrency
		}
		c := l.Call(u.Seq)
		c.Tool = u.Name
		if rj.now {
			c.State = schemas.CallDone
			return nil
		}
		c.State, c.Safe, c.Rejected, c.AbortText = schemas.CallReady, false, true, rj.abort
		return nil
	})
	switch {
	case !ok:
		return err
	case late != "":
		return r.answerLate(ctx, p, u, late)
	case first:
		return nil
	}
	return r.publishResult(ctx, p, u, rj.why, false, l.Total)
}

// end records the turn's number of calls and forwards the end to reorder.
func (r *Router) end(ctx context.Context, p subjects.Parsed, e *schemas.TurnEnd) error {
	l, _, ok, err := r.updateRev(ctx, p, nil, func(l *schemas.Lease) error {
		if l.Total >= 0 {
			return lease.ErrNoChange
		}
		l.Total = e.Calls
		return nil
	})
	if errors.Is(err, errUnended) {
		// The lease expired before the end came: no call of the turn
		// runs any more, but reorder gets the end, and answers the calls
		// that never came at the gap deadline.
		r.cfg.Log.Warn("router: turn_end for a turn whose lease expired before it", "tenant", p.Tenant, "turn", p.Turn, "calls", e.Calls)
		return r.publishEnd(ctx, p, &schemas.TurnEnd{Calls: e.Calls, StopReason: e.StopReason, Error: e.Error})
	}
	if !ok {
		return err
	}
	return r.publishEnd(ctx, p, &schemas.TurnEnd{Calls: l.Total, StopReason: e.StopReason, Error: e.Error})
}

// publishEnd gives reorder the turn's end. The lease's count is the one
// that holds when two ends disagree (a discard closed the turn first).
func (r *Router) publishEnd(ctx context.Context, p subjects.Parsed, e *schemas.TurnEnd) error {
	err := r.publish(ctx, r.cfg.Space.ResultEnd(p.Tenant, p.Turn), "", p, -1, e)
	if err != nil && r.subjectHasMsg(ctx, r.cfg.Space.ResultEnd(p.Tenant, p.Turn)) {
		return nil
	}
	return err
}

// cancel marks a user interrupt: calls not started never start, running
// calls of interruptible tools are stopped.
func (r *Router) cancel(ctx context.Context, p subjects.Parsed) error {
	_, _, err := r.update(ctx, p, nil, func(l *schemas.Lease) error {
		if l.Cancelled {
			return lease.ErrNoChange
		}
		l.Cancelled = true
		return nil
	})
	return err
}

// discard marks a failed stream: every unfinished call is stopped or never
// started. The stream that will not finish sends no turn_end, so the turn
// is closed at the calls seen so far.
func (r *Router) discard(ctx context.Context, p subjects.Parsed) error {
	l, ok, err := r.update(ctx, p, nil, func(l *schemas.Lease) error {
		if l.Discarded && l.Total >= 0 {
			return lease.ErrNoChange
		}
		l.Discarded = true
		if l.Total < 0 {
			l.Total = l.Seen()
		}
		return nil
	})
	if !ok {
		return err
	}
	return r.publishEnd(ctx, p, &schemas.TurnEnd{Calls: l.Total, StopReason: "discarded"})
}

// subjectHasMsg tells a refused publish to the result stream (the subject
// already has its one message) from a failed one.
func (r *Router) subjectHasMsg(ctx context.Context, subject string) bool {
	ctx, cancel := jserr.Bound(ctx)
	defer cancel()
	_, err := r.results.GetLastMsgForSubject(ctx, subject)
	return err == nil
}

// publish sends an event of the router's own; with tracing on, it
// continues the trace from the span in ctx (the hop handling the event
// that caused it).
func (r *Router) publish(ctx context.Context, subject, msgID string, p subjects.Parsed, seq int, data schemas.Data) error {
	return r.publishUsed(ctx, subject, msgID, p, schemas.Meta{}, seq, data)
}

// publishUsed is publish for an event about a call whose tool_use is use:
// it carries the use's trace context (with tracing off, the producer's as
// it came) and, as ce-usetime, its ce-time (zero: unknown).
func (r *Router) publishUsed(ctx context.Context, subject, msgID string, p subjects.Parsed, use schemas.Meta, seq int, data schemas.Data) error {
	meta := schemas.Meta{Source: r.cfg.Source, Tenant: p.Tenant, Turn: p.Turn, Seq: seq, TraceParent: use.TraceParent, TraceState: use.TraceState, UseTime: use.Time}
	if r.tracing {
		// The hop's span; with tracing off ctx holds no hop, and whatever
		// span it may hold (the embedding program's) is not the call's.
		tracing.Carry(ctx, &meta)
	}
	h, body, err := schemas.Encode(meta, data)
	if err != nil {
		return fmt.Errorf("router: encode %s: %w", data.EventType(), err)
	}
	ctx, cancel := jserr.Bound(ctx)
	defer cancel()
	_, err = r.js.PublishMsg(ctx, &nats.Msg{Subject: subject, Header: h, Data: body}, jetstream.WithMsgID(msgID))
	if err != nil {
		return fmt.Errorf("router: publish %s: %w", subject, err)
	}
	return nil
}
