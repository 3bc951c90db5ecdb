// Package reorder hands a turn's results to the agent in call order: it
// consumes results in any order and appends them to the turn's out subject
// strictly by seq, then turn_done once the turn's end marker says how many
// calls there were. When the count comes with the last result itself (a
// turn whose calls carried it), that result is appended marked as the
// turn's end (ce-turndone) and no turn_done follows.
//
// Instances keep no state that matters. The out subject itself is the
// cursor: every append expects the subject's last sequence
// (Nats-Expected-Last-Subject-Sequence), so of two instances racing to
// append the same result one wins and the other re-reads, and a retried
// append that was stored finds the cursor moved on. A result message is acknowledged only once the cursor
// has passed it, so a gap is always retried and nothing is lost.
package reorder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/answer"
	"github.com/toolwire/toolwire/internal/hedge"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/internal/leaderget"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// Config configures a reorder instance.
type Config struct {
	Space subjects.Space
	// Source is the ce-source of turn_done events.
	Source string
	// Lanes is the number of turns handled in parallel (default 16).
	Lanes    int
	Consumer provision.ConsumerConfig
	// Limits bound what a result or end marker may carry (default
	// schemas.DefaultLimits).
	Limits schemas.Limits
	// GapDeadline is how long a result (or the turn's end) waits behind a
	// call whose result never comes before that call gets an error result
	// in its place (default DefaultGapDeadline).
	GapDeadline time.Duration
	// Backoff spaces the retries of a result waiting behind a gap.
	Backoff stage.Backoff
	// Hooks are told of every result's outcome.
	Hooks stage.Hooks
	Log   *slog.Logger
}

// DefaultGapDeadline outlasts the longest call: the 10-minute ceiling on a
// call's timeout plus the 5 minutes a call may wait for its approval.
const DefaultGapDeadline = 20 * time.Minute

// DefaultMaxDeliver bounds the deliveries of a result waiting behind a gap.
const DefaultMaxDeliver = 1000

// withDefaults fills the zero fields of c.
func (c Config) withDefaults() Config {
	if c.Source == "" {
		c.Source = "/toolwire/reorder"
	}
	if c.Lanes <= 0 {
		c.Lanes = stage.DefaultLanes
	}
	if c.Consumer.MaxDeliver == 0 {
		// A result waiting behind a gap is retried until the gap fills or
		// the gap's deadline fills it: the deadline comes well before the
		// last delivery (about 600 deliveries in 20 minutes at the
		// back-off's cap).
		c.Consumer.MaxDeliver = DefaultMaxDeliver
	}
	c.Consumer = c.Consumer.WithDefaults()
	if c.GapDeadline <= 0 {
		c.GapDeadline = DefaultGapDeadline
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Reorder is one instance of the stage.
type Reorder struct {
	cfg     Config
	js      jetstream.JetStream
	leases  *lease.Store
	cons    jetstream.Consumer
	cache   *turnCache
	results jetstream.Stream
	out     *leaderget.Stream
}

// New prepares an instance on nc.
func New(ctx context.Context, nc *nats.Conn, cfg Config) (*Reorder, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Space.Check(); err != nil {
		return nil, fmt.Errorf("reorder: %w", err)
	}
	sp := cfg.Space
	bd, err := stage.Bind(ctx, nc, sp, stage.Binding{Stream: sp.ResultStream(), Name: sp.ReorderConsumer(), Config: cfg.Consumer})
	if err != nil {
		return nil, fmt.Errorf("reorder: %w", err)
	}
	js, leases, cons := bd.JS, bd.Leases, bd.Consumer
	results, err := js.Stream(ctx, sp.ResultStream())
	if err != nil {
		return nil, fmt.Errorf("reorder: %w", err)
	}
	// The out subject is the turn's cursor: read it from the leader.
	out := leaderget.New(js, sp, sp.OutStream())
	return &Reorder{cfg: cfg, js: js, leases: leases, results: hedge.Reads(results), out: out, cons: cons, cache: newTurnCache(cacheTurns)}, nil
}

// cursor is a turn's out subject as last read.
type cursor struct {
	delivered int    // results appended so far
	last      uint64 // stream sequence of the subject's last message (0: none)
	done      bool   // turn_done appended, or the last result marked as the end
}

// maxRaces bounds the re-reads after losing an append to another instance.
const maxRaces = 64

// advance appends every result that is next in line, starting from the
// cursor, and turn_done when the end is reached. m is the message in hand,
// which saves reading it back from the stream.
//
// A missing result whose seq is below fillBefore gets an error result in
// its place (the gap's deadline has passed); -1 fills nothing. m, when
// set, is the message in hand, decoded and checked by the runtime and
// handle: it is neither read back nor decoded again.
//
// On a message's first handling the instance trusts what it remembers
// (trust): a turn it has no cursor for is taken to be new, a result it
// has not seen arrive is taken not to be stored yet, and an end it has not
// seen not to have come. Each is right for a pipeline with one reorder
// instance, and a wrong guess only delays: the append expects the out
// subject's last sequence, so a cursor that is behind is refused and read
// again, and a message left waiting is retried after its back-off, which
// reads everything from the streams.
func (r *Reorder) advance(ctx context.Context, p subjects.Parsed, m *stage.Msg, fillBefore int) (cur cursor, err error) {
	key := p.Tenant + "." + p.Turn
	trust := m != nil && m.Delivered == 1 && m.Attempt <= 1 && fillBefore < 0
	cur, fromCache := r.cache.cursor(key)
	if fromCache && (cur.done || (m != nil && p.Kind != subjects.KindEnd && cur.delivered > p.Seq && !endDue(m, cur))) {
		// What this instance appended is there for good: a result it has
		// passed (a waiting one's retry) needs no read — unless it is the
		// last of a counted turn whose turn_done is not there yet (the
		// append of the end failed after the result's): its retry must
		// append it.
		return cur, nil
	}
	if !fromCache && !trust {
		if cur, err = r.readCursor(ctx, p); err != nil {
			return cur, err
		}
	}
	if trust {
		// Nothing to check against the stream when a gap is found: the
		// retry will.
		fromCache = false
	}
	// The count a result in hand carries (a turn whose calls carried it
	// has no end marker), held here, since another lane may wipe the cache
	// meanwhile, and remembered with the cursor.
	carried := 0
	if m != nil {
		carried = schemas.TurnCount(m.Data)
	}
	defer func() {
		if carried > 0 {
			r.cache.learnTotal(key, carried)
		}
		r.cache.keep(key, cur)
	}()
	races := 0
	for !cur.done {
		var h nats.Header
		var body []byte
		var done *schemas.TurnDone
		var res *schemas.ToolResult
		missing := false
		switch {
		case m != nil && p.Kind != subjects.KindEnd && p.Seq == cur.delivered:
			h, body = m.Raw.Headers(), m.Raw.Data()
			res, _ = m.Data.(*schemas.ToolResult)
		case trust:
			w, seen := r.cache.waits(key, cur.delivered)
			switch {
			case !seen:
				missing = true
			case w != nil:
				h, body, res = w.h, w.body, w.res
			default:
				if h, body, missing, err = r.readResult(ctx, p, cur.delivered); err != nil {
					return cur, err
				}
			}
		default:
			if h, body, missing, err = r.readResult(ctx, p, cur.delivered); err != nil {
				return cur, err
			}
		}
		// A late call's answer is not the turn's: its seq is at or past the
		// turn's end, so in its slot the turn is over (or, should the end
		// still be unknown, the slot waits).
		var bad error
		if !missing && res == nil {
			res, bad = r.checkResult(h, body, cur.delivered)
		}
		late := bad == nil && res != nil && res.Late
		if n := schemas.TurnCount(res); bad == nil && n > 0 {
			carried = n
		}
		if missing || late {
			total := carried
			if total <= 0 {
				if total, err = r.cachedTotal(ctx, key, p, m, trust); err != nil {
					return cur, err
				}
			}
			if (total < 0 || total > cur.delivered) && cur.delivered < fillBefore {
				bad = errNeverArrived{r.cfg.GapDeadline}
			} else if total < 0 || total > cur.delivered {
				if fromCache {
					// A cached cursor may be behind another
					// instance's appends: check before giving up.
					fromCache = false
					fresh, err := r.readCursor(ctx, p)
					if err != nil {
						return cur, err
					}
					if fresh != cur {
						cur = fresh
						continue
					}
				}
				return cur, nil
			} else {
				done = &schemas.TurnDone{Results: cur.delivered}
			}
		}
		if done != nil {
			h, body, err = schemas.Encode(schemas.Meta{Source: r.cfg.Source, Tenant: p.Tenant, Turn: p.Turn, Seq: -1}, done)
			if err != nil {
				return cur, err
			}
		} else if bad != nil {
			if h, body, err = r.substitute(p, cur.delivered, bad); err != nil {
				return cur, err
			}
		}
		// The last result of a turn whose count it knows completes the
		// turn itself: one append instead of the result's and a
		// turn_done's.
		completes := 0
		if done == nil && carried > 0 && cur.delivered+1 == carried {
			completes = carried
		}
		// The expectation names the subject explicitly, and is stored
		// with the message: replayed anywhere (a direct get's answer
		// aimed at another turn's out subject by another tenant), it is
		// checked against this subject again, which now holds the
		// message itself, and refused.
		outSubject := r.cfg.Space.Out(p.Tenant, p.Turn)
		pctx, cancel := appendBound(ctx, m)
		ack, err := r.js.PublishMsg(pctx, &nats.Msg{Subject: outSubject, Header: schemas.OutHeaders(h, completes), Data: body},
			jetstream.WithExpectLastSequenceForSubject(cur.last, outSubject))
		cancel()
		if err == nil && !ack.Duplicate {
			cur.last = ack.Sequence
			if done != nil {
				cur.done = true
			} else {
				cur.done = completes > 0
				cur.delivered++
				if r.cfg.Hooks.Call != nil {
					r.cfg.Hooks.OnCall(stage.CallEvent{Stage: subjects.StageReorder, Tenant: p.Tenant, Tool: toolOf(res), Outcome: "delivered", E2E: sinceUse(h)})
				}
			}
			continue
		}
		if err != nil && !jserr.Conflict(err) {
			return cur, fmt.Errorf("reorder: append: %w", err)
		}
		// Another instance appended first: read where it left the cursor.
		// What this instance saw of the turn is not all there was, so it
		// trusts it no more (a count the other one saw, on a result, is
		// then read back).
		if races++; races > maxRaces {
			return cur, errors.New("reorder: lost too many races for the turn's out subject")
		}
		fromCache, trust = false, false
		if cur, err = r.readCursor(ctx, p); err != nil {
			return cur, err
		}
	}
	return cur, nil
}

// appendBound bounds one append to the out subject. The turn's client
// subscribes to that subject, so while the stream has no leader an append
// is not answered at all, not even "no responders", and waits its whole
// bound. A message tried again (held while JetStream was unavailable,
// every 250 ms) waits at most retryAppendWait instead: its append then
// goes through within a step of the stream's return, not up to 1.5 s
// after. An append answered late was stored all the same, and the next
// try finds it as a race. (Sending copies while one waits, as reads do,
// would make the copies refused while the first is committed look like
// races lost to another instance.)
func appendBound(ctx context.Context, m *stage.Msg) (context.Context, context.CancelFunc) {
	if m != nil && m.Attempt > 1 {
		return context.WithTimeout(ctx, retryAppendWait)
	}
	return jserr.Bound(ctx)
}

// retryAppendWait bounds an append of a message tried again.
const retryAppendWait = 300 * time.Millisecond

// readResult reads the stored result of call seq; missing when none is.
// endDue reports whether m is a result of a counted turn whose results
// cur has all delivered while its turn_done is not appended yet.
func endDue(m *stage.Msg, cur cursor) bool {
	n := schemas.TurnCount(m.Data)
	return n > 0 && cur.delivered >= n && !cur.done
}

func (r *Reorder) readResult(ctx context.Context, p subjects.Parsed, seq int) (h nats.Header, body []byte, missing bool, err error) {
	ctx, cancel := jserr.Bound(ctx)
	defer cancel()
	raw, err := r.results.GetLastMsgForSubject(ctx, r.cfg.Space.Result(p.Tenant, p.Turn, seq))
	switch {
	case err == nil:
		return raw.Header, raw.Data, false, nil
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return nil, nil, true, nil
	}
	return nil, nil, false, fmt.Errorf("reorder: read result %d: %w", seq, err)
}

// cachedTotal is total, remembered once known: an end marker never changes.
// Trusting, an end not seen here is taken not to have come (the marker
// in hand aside).
func (r *Reorder) cachedTotal(ctx context.Context, key string, p subjects.Parsed, m *stage.Msg, trust bool) (int, error) {
	if n, ok := r.cache.total(key); ok {
		return n, nil
	}
	if trust && p.Kind != subjects.KindEnd {
		return -1, nil
	}
	n, err := r.total(ctx, p, m)
	if err == nil && n >= 0 {
		r.cache.keepTotal(key, n)
	}
	return n, err
}

// readCursor reads the turn's out subject's last message of the turn's own
// (leaderget.Stream.LastWhere skips another tenant's): the cursor counts the
// turn's messages, and appends expect the subject's real last sequence.
func (r *Reorder) readCursor(ctx context.Context, p subjects.Parsed) (cursor, error) {
	ctx, cancel := jserr.Bound(ctx)
	defer cancel()
	own, last, err := r.out.LastWhere(ctx, r.cfg.Space.Out(p.Tenant, p.Turn), func(m *jetstream.RawStreamMsg) bool { return r.owned(m, p) })
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		// Nothing of the turn's own; appends still expect the subject's
		// real last sequence.
		return cursor{last: last}, nil
	case err != nil:
		return cursor{}, fmt.Errorf("reorder: read cursor: %w", err)
	}
	cur, err := cursorAt(own)
	cur.last = last
	return cur, err
}

// owned reports whether raw, read from turn p's out subject, is the turn's
// own: its ce-tenant and ce-turn say so and it is no copy of a message
// stored elsewhere (schemas.CopiedFrom).
func (r *Reorder) owned(raw *jetstream.RawStreamMsg, p subjects.Parsed) bool {
	return schemas.OwnedBy(raw.Header, r.cfg.Space.Out(p.Tenant, p.Turn), p.Tenant, p.Turn)
}

// cursorAt is the cursor a turn's own out message at raw leaves.
func cursorAt(raw *jetstream.RawStreamMsg) (cursor, error) {
	if raw.Header.Get("ce-type") == schemas.TypeTurnDone {
		return cursor{done: true, last: raw.Sequence}, nil
	}
	seq, err := strconv.Atoi(raw.Header.Get("ce-seq"))
	if err != nil {
		return cursor{}, fmt.Errorf("reorder: out message %d has no ce-seq", raw.Sequence)
	}
	return cursor{delivered: seq + 1, last: raw.Sequence, done: schemas.TurnDoneOf(raw.Header) == seq+1}, nil
}

// total is the turn's number of calls from its end marker or, for a turn
// whose calls carried it, from the result in hand; -1 while unknown. When
// there is no marker, or the marker in the stream is not a turn_end (a
// poison message took its slot), the lease, which the router wrote first,
// says.
func (r *Reorder) total(ctx context.Context, p subjects.Parsed, m *stage.Msg) (int, error) {
	if m != nil {
		if n := schemas.TurnCount(m.Data); n > 0 {
			return n, nil
		}
	}
	if m != nil && p.Kind == subjects.KindEnd {
		if end, ok := m.Data.(*schemas.TurnEnd); ok {
			return end.Calls, nil
		}
	} else {
		gctx, cancel := jserr.Bound(ctx)
		raw, err := r.results.GetLastMsgForSubject(gctx, r.cfg.Space.ResultEnd(p.Tenant, p.Turn))
		cancel()
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return r.leaseTotal(ctx, p)
		}
		if err != nil {
			return -1, fmt.Errorf("reorder: read end marker: %w", err)
		}
		_, data, err := r.cfg.Limits.Decode(raw.Header, raw.Data)
		if end, ok := data.(*schemas.TurnEnd); err == nil && ok {
			return end.Calls, nil
		}
	}
	l, _, err := r.leases.Get(ctx, p.Tenant, p.Turn)
	if err != nil {
		return -1, fmt.Errorf("reorder: the end marker is bad and the lease unreadable: %w", err)
	}
	return l.Total, nil
}

// leaseTotal is the turn's count as its lease has it, for a turn with no
// end marker, -1 while unknown. When the lease is gone (a finished turn
// whose results reorder was slow to take), the count its first delivered
// result carries, if any: -1 otherwise (an expired turn, whose missing
// calls the gap's deadline answers).
func (r *Reorder) leaseTotal(ctx context.Context, p subjects.Parsed) (int, error) {
	l, _, err := r.leases.Get(ctx, p.Tenant, p.Turn)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return r.outTotal(ctx, p)
	case err != nil:
		return -1, fmt.Errorf("reorder: read the turn's lease: %w", err)
	}
	return l.Total, nil
}

// outTotal is the count the turn's delivered results carry
// (ToolResult.TurnCalls): the first one's, else the last one's (the first
// may come from a call registered before the count, or be reorder's own
// stand-in); -1 when neither carries it.
func (r *Reorder) outTotal(ctx context.Context, p subjects.Parsed) (int, error) {
	ctx, cancel := jserr.Bound(ctx)
	defer cancel()
	subject := r.cfg.Space.Out(p.Tenant, p.Turn)
	for _, last := range []bool{false, true} {
		var raw *jetstream.RawStreamMsg
		var err error
		if last {
			raw, err = r.out.GetLastMsgForSubject(ctx, subject)
		} else {
			raw, err = r.out.Next(ctx, 0, subject)
		}
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			return -1, nil
		case err != nil:
			return -1, fmt.Errorf("reorder: read the turn's delivered results: %w", err)
		}
		if !r.owned(raw, p) {
			continue
		}
		if _, d, err := r.cfg.Limits.Decode(raw.Header, raw.Data); err == nil && schemas.TurnCount(d) > 0 {
			return schemas.TurnCount(d), nil
		}
	}
	return -1, nil
}

// checkResult reports why a message is not the result of call seq, or
// returns the result.
func (r *Reorder) checkResult(h nats.Header, body []byte, seq int) (*schemas.ToolResult, error) {
	meta, data, err := r.cfg.Limits.Decode(h, body)
	if err != nil {
		return nil, err
	}
	return resultOf(meta, data, seq)
}

// resultOf is the decoded event as the result of call seq, or why it is not.
func resultOf(meta schemas.Meta, data schemas.Data, seq int) (*schemas.ToolResult, error) {
	res, ok := data.(*schemas.ToolResult)
	if !ok {
		return nil, fmt.Errorf("result slot holds %s, not %s", meta.Type, schemas.TypeToolResult)
	}
	if res.Seq != seq || meta.Seq != seq {
		return nil, fmt.Errorf("result for seq %d (ce-seq %d) in the slot of seq %d", res.Seq, meta.Seq, seq)
	}
	return res, nil
}

// substitute is the error result given in place of a bad one, so the
// agent still gets one result per call.
func (r *Reorder) substitute(p subjects.Parsed, seq int, bad error) (nats.Header, []byte, error) {
	text := texts.Lost(bad.Error())
	var never errNeverArrived
	if errors.As(bad, &never) {
		text = never.Error()
	}
	res := answer.Error(seq, "unknown", "", "reorder", text, time.Now())
	return schemas.Encode(schemas.Meta{Source: r.cfg.Source, Tenant: p.Tenant, Turn: p.Turn, Seq: seq}, res)
}

// toolOf names a delivered result's tool; "" for a stand-in of a result
// that never came.
func toolOf(res *schemas.ToolResult) string {
	if res == nil {
		return ""
	}
	return res.Name
}

// sinceUse is how long ago the call of a result's headers was published
// (ce-usetime), 0 when they do not say.
func sinceUse(h nats.Header) time.Duration {
	used := schemas.UseTimeOf(h)
	if used.IsZero() {
		return 0
	}
	return max(time.Since(used), 0)
}
