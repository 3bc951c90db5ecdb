package stage

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/tracing"
	"github.com/toolwire/toolwire/schemas"
)

// Run consumes spec.Consumer with h until ctx is done. A message handed to
// a handler is finished with a context that outlives ctx, so that a drain
// finishes what it has rather than dropping it; Msg.Recv ends with ctx.
func Run(ctx context.Context, js jetstream.JetStream, spec Spec, h Handler) error {
	spec.withDefaults()
	r := &runner{spec: spec, js: js, h: h, recv: ctx, tracer: tracing.New(spec.Hooks.TracerProvider)}
	work := context.WithoutCancel(ctx)
	// The handlers' lease writes are counted as this stage's.
	work = spec.Hooks.leaseTrace(work, spec.Stage)
	var submit func(jetstream.Msg, int)
	if spec.Lanes > 0 {
		var together func(jetstream.Msg) bool
		if spec.Together != nil {
			together = func(m jetstream.Msg) bool {
				p, err := spec.Parse(m.Subject())
				return err == nil && spec.Together(p)
			}
		}
		l := newLanes(work, spec.Lanes, spec.LaneDepth, together, r.deliver, r.deliverTogether)
		defer l.close()
		submit = func(m jetstream.Msg, attempt int) { l.submit(r.laneKey(m), m, attempt) }
	} else {
		var wg sync.WaitGroup
		defer wg.Wait()
		submit = func(m jetstream.Msg, attempt int) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.deliver(work, m, attempt)
			}()
		}
	}
	// Stopped before the lanes close: a retry must not come after.
	r.later = newLater(submit)
	defer r.later.stop()
	return consume(ctx, spec.Consumer, spec.Batch, spec.Log, func(m jetstream.Msg) { submit(m, 1) })
}

// runner is one running stage.
type runner struct {
	spec Spec
	js   jetstream.JetStream
	h    Handler
	recv context.Context
	// later runs the first retries of a delivery in this process.
	later *later
	// tracer is nil when tracing is off.
	tracer *tracing.Tracer
}

// laneKey keeps a turn's messages on one lane; a subject that does not
// parse goes to the lane of "", where deliver dead-letters it.
func (r *runner) laneKey(m jetstream.Msg) string {
	p, err := r.spec.Parse(m.Subject())
	if err != nil {
		return ""
	}
	return p.Tenant + "." + p.Turn
}

// deliver takes one delivery from receipt to its outcome.
func (r *runner) deliver(ctx context.Context, raw jetstream.Msg, attempt int) {
	start := time.Now()
	m := r.msg(raw, attempt)
	err := r.prepare(m)
	ctx, span := r.trace(ctx, m, start)
	if err == nil {
		err = r.call(ctx, m)
	}
	r.finish(ctx, m, err, start, span)
}

// deliverTogether handles a run of one turn's messages at once (Spec.
// Together). A message that does not decode waits for the others: its
// answer may depend on what they did (an end too broken to use closes the
// turn at the calls seen).
func (r *runner) deliverTogether(ctx context.Context, run []laneMsg) {
	start := time.Now()
	var ok, bad []*Msg
	var whyBad []error
	for _, lm := range run {
		m := r.msg(lm.m, lm.attempt)
		if err := r.prepare(m); err != nil {
			bad, whyBad = append(bad, m), append(whyBad, err)
			continue
		}
		ok = append(ok, m)
	}
	// Their lease updates go in one compare-and-set.
	g := lease.Gather(len(ok))
	var wg sync.WaitGroup
	for _, m := range ok {
		wg.Go(func() {
			tctx, span := r.trace(ctx, m, start)
			mctx, settled := g.Join(tctx)
			err := r.call(mctx, m)
			settled()
			r.finish(tctx, m, err, start, span)
		})
	}
	wg.Wait()
	for i, m := range bad {
		tctx, span := r.trace(ctx, m, start)
		r.finish(tctx, m, whyBad[i], start, span)
	}
}

// trace starts the span of m's handling, received at start, and makes it
// the trace context m's handler passes on (Meta.TraceParent): what the
// stage publishes about m continues from this hop. With tracing off, m's
// own trace context is passed on as it came.
func (r *runner) trace(ctx context.Context, m *Msg, start time.Time) (context.Context, tracing.Span) {
	if r.tracer == nil {
		return ctx, tracing.Span{}
	}
	// From the headers: they hold the trace context even when the rest
	// of the event did not decode.
	parent, state := schemas.TraceOf(m.Raw.Headers())
	ctx, span := r.tracer.StartHop(ctx, tracing.Hop{
		Stage: r.spec.Stage, Subject: m.Raw.Subject(), Type: m.Meta.Type,
		Tenant: m.Subject.Tenant, Turn: m.Subject.Turn, Seq: m.Meta.Seq, Delivered: m.Delivered,
		Parent: parent, State: state, Start: start,
	})
	m.Meta.TraceParent, m.Meta.TraceState = span.Trace()
	return ctx, span
}

// msg is the handler's view of one delivery.
func (r *runner) msg(raw jetstream.Msg, attempt int) *Msg {
	m := &Msg{Raw: raw, Meta: schemas.Meta{Seq: -1}, Recv: r.recv, Delivered: 1, Attempt: attempt}
	if md, err := raw.Metadata(); err == nil {
		m.Delivered = int(md.NumDelivered)
	}
	m.Last = r.spec.MaxDeliver > 0 && m.Delivered >= r.spec.MaxDeliver
	return m
}

// finish settles a handled message, tells the hooks and ends its span.
func (r *runner) finish(ctx context.Context, m *Msg, err error, start time.Time, span tracing.Span) {
	o := r.settle(ctx, m, err)
	if r.spec.Hooks.Handled != nil {
		r.spec.Hooks.Handled(Handling{Stage: r.spec.Stage, Tenant: m.Subject.Tenant, Outcome: o, Took: time.Since(start), Delivered: m.Delivered})
	}
	if r.tracer != nil {
		span.Settled(o.String(), o == DeadLettered, errClass(err))
		span.End()
	}
}

// prepare parses the subject and decodes the event under the limits. What
// decoded stays in m even when the rest did not, for the answer.
func (r *runner) prepare(m *Msg) error {
	p, err := r.spec.Parse(m.Raw.Subject())
	if err != nil {
		// No turn to answer in: the subject says none.
		return Drop(err)
	}
	m.Subject = p
	if from, copied := schemas.CopiedFrom(m.Raw.Headers(), m.Raw.Subject()); copied {
		// Another tenant's message, aimed here by a direct get: not an
		// event of this turn, and nothing of it is answered.
		return Drop(fmt.Errorf("a copy of the message stored on %s (a direct get's answer aimed at this subject), not an event published here", from))
	}
	m.Meta, m.Data, err = r.spec.Limits.Decode(m.Raw.Headers(), m.Raw.Data())
	if err != nil {
		return Fail(&MalformedError{Err: err})
	}
	return nil
}

// call runs the handler; a panic is the message's failure, not the
// process's end.
func (r *runner) call(ctx context.Context, m *Msg) (err error) {
	defer func() {
		if v := recover(); v != nil {
			r.spec.Log.Error("stage handler panicked", append(m.logAttrs(r.spec.Stage), "panic", v, "stack", string(debug.Stack()))...)
			err = Fail(fmt.Errorf("%s stage panicked handling this message: %v", r.spec.Stage, v))
		}
	}()
	return r.h(ctx, m)
}

// settle acks, naks or gives up on the message as err says.
func (r *runner) settle(ctx context.Context, m *Msg, err error) Outcome {
	if err == nil {
		_ = m.Raw.Ack()
		return Acked
	}
	c := classify(err)
	cause := c.err
	if cause == nil {
		// Fail(nil), Drop(nil), Retry(nil): the classification is the
		// reason. A nil cause would reach the dead letter's reason.Error()
		// outside the handler's recover and crash the process.
		cause = c
	}
	switch c.kind {
	case kindLeave:
		if !m.Last {
			return Left
		}
		// The server will not deliver the message again, so no other
		// instance can take it: left, it would be lost with its call.
		return r.giveUp(ctx, m, fmt.Errorf("%s stage left this message unfinished on its last delivery (%d): no other instance will get it", r.spec.Stage, m.Delivered), true)
	case kindDrop:
		return r.giveUp(ctx, m, cause, false)
	case kindFail:
		return r.giveUp(ctx, m, cause, true)
	}
	if m.Last {
		return r.giveUp(ctx, m, fmt.Errorf("%s stage gave up after %d deliveries: %w", r.spec.Stage, m.Delivered, cause), true)
	}
	if jserr.Unavailable(cause) && m.Attempt <= maxUnavailableAttempts && !r.gone(ctx, m, cause) {
		// The cluster cannot answer for now — a stream electing a new
		// leader after a member died, a server restarting. Held here
		// and tried again every quarter second, the message resumes the
		// moment the stream is back, and the wait burns none of its
		// deliveries (a nak per back-off step would give a call up
		// after half a minute of a failover).
		_ = m.Raw.InProgress()
		if r.later.after(unavailableRetry, m.Raw, m.Attempt+1) {
			if m.Attempt == 1 {
				r.spec.Log.Warn("JetStream unavailable; holding the message", append(m.logAttrs(r.spec.Stage), "err", cause)...)
			}
			return Retried
		}
	}
	if d := c.after; m.Attempt <= inProcessRetries && d <= maxInProcess {
		if d <= 0 {
			d = r.spec.Backoff.Delay(m.Attempt)
		}
		if d <= maxInProcess && r.later.after(d, m.Raw, m.Attempt+1) {
			r.spec.Log.Debug("retrying in process", append(m.logAttrs(r.spec.Stage), "attempt", m.Attempt, "in", d, "err", cause)...)
			return Retried
		}
	}
	delay := c.after
	if delay <= 0 {
		delay = r.spec.Backoff.Delay(m.Delivered)
	}
	r.spec.Log.Warn("retrying", append(m.logAttrs(r.spec.Stage), "delivery", m.Delivered, "in", delay, "err", cause)...)
	_ = m.Raw.NakWithDelay(delay)
	return Retried
}

// gone reports whether a failure that looks like an unavailable JetStream
// is a stream of the pipeline that was deleted (which also answers "no
// responders"): that one is not waited out. The server is asked on the
// first try and then every two seconds of the wait.
func (r *runner) gone(ctx context.Context, m *Msg, cause error) bool {
	if m.Attempt%8 != 1 {
		return false
	}
	sp := r.spec.Space
	return jserr.Gone(ctx, r.js, cause, sp.InStream(), sp.ExecStream(), sp.ResultStream(), sp.OutStream(), sp.LeaseStream())
}

// giveUp answers the call the message names (when answer is set and the
// stage has calls to answer), then dead-letters the message. An answer
// that fails is retried with the message while it has deliveries left: the
// dead letter must not come before the answer, or the call is lost.
func (r *runner) giveUp(ctx context.Context, m *Msg, cause error, answer bool) Outcome {
	if answer && r.spec.Answer != nil {
		if err := r.spec.Answer(ctx, m, cause); err != nil {
			if !m.Last {
				r.spec.Log.Warn("could not answer a message given up on; retrying", append(m.logAttrs(r.spec.Stage), "cause", cause, "err", err)...)
				_ = m.Raw.NakWithDelay(r.spec.Backoff.Delay(m.Delivered))
				return Retried
			}
			r.spec.Log.Error("could not answer a message on its last delivery", append(m.logAttrs(r.spec.Stage), "cause", cause, "err", err)...)
		}
	}
	if err := DeadLetter(ctx, r.js, r.spec.Space, m.Subject.Tenant, r.spec.Stage, m.Raw, cause, r.spec.Log); err != nil {
		// The answer is out (or there is none); the record is not. The
		// next delivery tries again — the answer is idempotent.
		r.spec.Log.Error("dead letter refused; retrying", append(m.logAttrs(r.spec.Stage), "cause", cause, "err", err)...)
		_ = m.Raw.NakWithDelay(r.spec.Backoff.Delay(m.Delivered))
		return Retried
	}
	return DeadLettered
}

// logAttrs are the attributes of every line about m: the stage, the
// subject and, as far as they are known, the call's tenant, turn and seq.
func (m *Msg) logAttrs(stage string) []any {
	return []any{"stage", stage, "subject", m.Raw.Subject(), "tenant", m.Subject.Tenant, "turn", m.Subject.Turn, "seq", m.Meta.Seq}
}
