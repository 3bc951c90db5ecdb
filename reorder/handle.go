package reorder

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// Run consumes results until ctx is done.
func (r *Reorder) Run(ctx context.Context) error {
	return stage.Run(ctx, r.js, stage.Spec{
		Stage: subjects.StageReorder, Space: r.cfg.Space, Consumer: r.cons,
		MaxDeliver: r.cfg.Consumer.MaxDeliver, Parse: r.cfg.Space.ParseResult, Limits: r.cfg.Limits,
		Lanes: r.cfg.Lanes, Backoff: r.cfg.Backoff, Answer: r.answer, Hooks: r.cfg.Hooks, Log: r.cfg.Log,
	}, r.handle)
}

// errBehindGap is the retry of a result whose turn's cursor has not reached
// it: another result (or the end) must come first. Whoever fills the gap
// walks on past this one; the retry is the safety net.
var errBehindGap = errors.New("reorder: waiting behind an earlier call's result")

// errNeverArrived is the answer of a call whose result never came while a
// later result (or the turn's end) waited the gap's deadline for it.
type errNeverArrived struct{ waited time.Duration }

func (e errNeverArrived) Error() string {
	return texts.NeverArrived(e.waited)
}

// handle moves the turn's cursor as far as the stored results allow.
func (r *Reorder) handle(ctx context.Context, m *stage.Msg) error {
	p := m.Subject
	if err := check(p, m); err != nil {
		return stage.Fail(err)
	}
	fill := -1
	if r.overdue(m) || m.Last {
		// The gap's deadline has passed, or the server will not deliver
		// this message again: the calls before it that never came are
		// answered now.
		fill = fillLimit(p)
	}
	cur, err := r.advance(ctx, p, m, fill)
	// Passed: delivered, and, for the last result of a counted turn, the
	// turn's end appended too — the result marked as it, or a turn_done
	// after it (else the retry appends it).
	passed := cur.done || (p.Kind != subjects.KindEnd && cur.delivered > p.Seq && !endDue(m, cur))
	switch {
	case passed:
		return nil
	case err != nil:
		return err
	}
	if p.Kind != subjects.KindEnd {
		// Whoever fills the gap reads this one back at once.
		res, _ := m.Data.(*schemas.ToolResult)
		r.cache.wait(p.Tenant+"."+p.Turn, p.Seq, m.Raw.Headers(), m.Raw.Data(), res)
	}
	return errBehindGap
}

// answer is the reorder's stage.Answerer. A bad result gets an error result
// in its place when the cursor reaches it (advance substitutes it); until
// then it is retried, not let go, because the result stream deletes a
// terminated message and the cursor must find it in its slot. A bad end
// marker leaves the turn's count to the lease, read now for the same
// reason. On a message's last delivery the calls before it that never came
// are answered, so no turn waits for ever.
func (r *Reorder) answer(ctx context.Context, m *stage.Msg, _ error) error {
	p := m.Subject
	if p.Kind == subjects.KindEnd && !m.Last {
		l, _, err := r.leases.Get(ctx, p.Tenant, p.Turn)
		if err != nil || l.Total < 0 {
			// No turn to end (a stray marker), or not yet known: the
			// marker goes to the dead letters either way.
			return nil
		}
		r.cache.keepTotal(p.Tenant+"."+p.Turn, l.Total)
		_, err = r.advance(ctx, p, nil, -1)
		return err
	}
	fill := -1
	if m.Last {
		fill = fillLimit(p)
	}
	cur, err := r.advance(ctx, p, nil, fill)
	switch {
	case err != nil:
		return err
	case cur.done || (p.Kind != subjects.KindEnd && cur.delivered > p.Seq):
		return nil
	}
	if p.Kind == subjects.KindEnd {
		return nil
	}
	// Whoever fills the gap replaces it at once.
	r.cache.wait(p.Tenant+"."+p.Turn, p.Seq, m.Raw.Headers(), m.Raw.Data(), nil)
	return errBehindGap
}

// check reports why a message is not what its subject says: the turn's
// end marker or the result of call p.Seq.
func check(p subjects.Parsed, m *stage.Msg) error {
	if p.Kind != subjects.KindEnd {
		_, err := resultOf(m.Meta, m.Data, p.Seq)
		return err
	}
	if _, ok := m.Data.(*schemas.TurnEnd); !ok {
		return fmt.Errorf("end marker is %s, not %s", m.Meta.Type, schemas.TypeTurnEnd)
	}
	return nil
}

// overdue reports whether the message has waited the gap's deadline since
// it was stored.
func (r *Reorder) overdue(m *stage.Msg) bool {
	md, err := m.Raw.Metadata()
	return err == nil && time.Since(md.Timestamp) > r.cfg.GapDeadline
}

// fillLimit is how far a waiting message may fill the gap before it: up to
// its own seq for a result, the whole turn for the end marker.
func fillLimit(p subjects.Parsed) int {
	if p.Kind == subjects.KindEnd {
		return math.MaxInt
	}
	return p.Seq
}
