package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// Delivery is one item of a turn's ordered output: a result, or, last, the
// turn's completion.
type Delivery struct {
	// Result is a call's result; nil in the last delivery.
	Result *schemas.ToolResult
	// Done is the turn's completion, set only in the last delivery.
	Done *schemas.TurnDone
	// At is when the client received it.
	At time.Time
}

// ErrBadDelivery is returned for an out message that does not decode.
var ErrBadDelivery = errors.New("client: undecodable delivery")

// rescanEvery bounds how long a gap in what the subscription saw waits
// before the stream itself is read.
const rescanEvery = 500 * time.Millisecond

// Results yields a turn's results in call order, then its TurnDone, and
// stops. It may be called before or after the turn is submitted.
//
// It reads the turn's out subject with a core subscription (each message
// arrives the moment the reorder stage stores it) and reads the stream for
// what was stored before the subscription began or what the subscription
// missed. Unlike a consumer per turn this costs the server no state: an
// agent platform can follow thousands of turns at once.
func (c *Client) Results(ctx context.Context, turn string) iter.Seq2[Delivery, error] {
	return func(yield func(Delivery, error) bool) {
		if err := checkTurn("results", turn); err != nil {
			yield(Delivery{}, err)
			return
		}
		subject := c.cfg.Space.Out(c.cfg.Tenant, turn)
		live := make(chan *nats.Msg, 1024)
		sub, err := c.nc.ChanSubscribe(subject, live)
		if err != nil {
			yield(Delivery{}, fmt.Errorf("client: results of %s: %w", turn, err))
			return
		}
		defer sub.Unsubscribe()
		r := &reader{c: c, turn: turn, subject: subject, pending: map[int]Delivery{}}
		rescan := time.NewTimer(0)
		defer rescan.Stop()
		for {
			select {
			case m := <-live:
				if _, err := r.add(m.Header, m.Data); err != nil && !yield(Delivery{}, err) {
					return
				}
			case <-rescan.C:
				// A stream or a reader that cannot answer for now (its
				// leader died with a cluster member, a server
				// restarting) is read again at the next tick: the turn
				// goes on meanwhile.
				if err := r.scan(ctx); err != nil && (ctx.Err() != nil || !readAgain(err)) {
					yield(Delivery{}, fmt.Errorf("client: results of %s: %w", turn, err))
					return
				}
				rescan.Reset(rescanEvery)
			case <-ctx.Done():
				yield(Delivery{}, fmt.Errorf("client: results of %s: %w", turn, ctx.Err()))
				return
			}
			for {
				d, ok := r.next()
				if !ok {
					break
				}
				if !yield(d, nil) || d.Done != nil {
					return
				}
			}
		}
	}
}

// reader puts a turn's out messages, from either source, back in order
// and drops the ones seen twice.
type reader struct {
	c       *Client
	turn    string
	subject string
	pending map[int]Delivery // results by seq
	done    *Delivery        // turn_done, once seen
	want    int              // seq of the next result to yield
	scanned uint64           // stream sequence up to which scan read all
}

// add decodes one out message and keeps it until its turn. It returns the
// seq of the last result the message implies was stored before it: the
// result's own, or, for turn_done, the turn's last (a result marked as the
// turn's completion is both); -1 for a message of
// another turn, which is dropped.
func (r *reader) add(h nats.Header, body []byte) (int, error) {
	if _, copied := schemas.CopiedFrom(h, r.subject); copied {
		return -1, nil // another tenant's message aimed here (schemas.CopiedFrom)
	}
	meta, data, err := schemas.Decode(h, body)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrBadDelivery, err)
	}
	if !r.c.ours(meta, r.turn) {
		return -1, nil // another tenant's, sent here (Client.ours)
	}
	d := Delivery{At: time.Now().UTC()}
	switch v := data.(type) {
	case *schemas.ToolResult:
		if v.Seq >= r.want {
			d.Result = v
			r.pending[v.Seq] = d
		}
		if done := schemas.DoneOf(meta, v); done != nil {
			// The turn's last result is its completion too.
			r.done = &Delivery{Done: done, At: d.At}
		}
		return v.Seq, nil
	case *schemas.TurnDone:
		d.Done = v
		r.done = &d
		return v.Results - 1, nil
	default:
		return 0, fmt.Errorf("%w: unexpected %s", ErrBadDelivery, data.EventType())
	}
}

// next returns the delivery that is next in order, if it has arrived.
func (r *reader) next() (Delivery, bool) {
	if d, ok := r.pending[r.want]; ok {
		delete(r.pending, r.want)
		r.want++
		return d, true
	}
	if r.done != nil && r.done.Done.Results == r.want {
		return *r.done, true
	}
	return Delivery{}, false
}

// scan reads what the stream holds for the turn and the subscription did
// not bring: the subject's last message tells whether anything is missing
// (one direct get, the usual case), and only then are the messages past
// the last one read asked of the stages (a gap read).
func (r *reader) scan(ctx context.Context) error {
	stream := r.c.cfg.Space.OutStream()
	last, err := r.c.lastMsg(ctx, stream, r.subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) || err == nil && last.seq <= r.scanned {
		return nil
	}
	if err != nil {
		return err
	}
	upTo, err := r.add(last.header, last.data)
	if err != nil {
		return err
	}
	// A last message that was dropped (not the turn's) says nothing of
	// what the turn has stored before it: read the stretch.
	if upTo < 0 || !r.have(upTo) {
		err = r.c.readAfter(ctx, subjects.ReadOut, r.turn, r.scanned, func(m *stored) error {
			_, err := r.add(m.header, m.data)
			return err
		})
		if err != nil {
			return err
		}
	}
	// The out subject holds a turn's messages in call order: with its
	// last one, every earlier one is known. A gap read cut short left
	// scanned where it was, so the next scan reads that stretch again.
	r.scanned = last.seq
	return nil
}

// have reports whether every result from the next one to yield up to
// seq upTo is here.
func (r *reader) have(upTo int) bool {
	for seq := r.want; seq <= upTo; seq++ {
		if _, ok := r.pending[seq]; !ok {
			return false
		}
	}
	return true
}
