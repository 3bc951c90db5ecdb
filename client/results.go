package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/schemas"
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
		r := &reader{c: c, subject: subject, pending: map[int]Delivery{}}
		rescan := time.NewTimer(0)
		defer rescan.Stop()
		for {
			select {
			case m := <-live:
				if err := r.add(m.Header, m.Data); err != nil && !yield(Delivery{}, err) {
					return
				}
			case <-rescan.C:
				// A stream that cannot answer for now (its leader died
				// with a cluster member, a server restarting) is read
				// again at the next tick: the turn goes on meanwhile.
				if err := r.scan(ctx); err != nil && (ctx.Err() != nil || !jserr.Unavailable(err)) {
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
	subject string
	pending map[int]Delivery // results by seq
	done    *Delivery        // turn_done, once seen
	want    int              // seq of the next result to yield
	scanned uint64           // last stream sequence read by scan
}

// add decodes one out message and keeps it until its turn.
func (r *reader) add(h nats.Header, body []byte) error {
	_, data, err := schemas.Decode(h, body)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadDelivery, err)
	}
	d := Delivery{At: time.Now().UTC()}
	switch v := data.(type) {
	case *schemas.ToolResult:
		if v.Seq >= r.want {
			d.Result = v
			r.pending[v.Seq] = d
		}
	case *schemas.TurnDone:
		d.Done = v
		r.done = &d
	default:
		return fmt.Errorf("%w: unexpected %s", ErrBadDelivery, data.EventType())
	}
	return nil
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

// scan reads what the stream holds for the turn past the last message read.
func (r *reader) scan(ctx context.Context) error {
	s, err := r.c.outStream(ctx)
	if err != nil {
		return err
	}
	for {
		gctx, cancel := jserr.Bound(ctx)
		raw, err := s.GetMsg(gctx, r.scanned+1, jetstream.WithGetMsgSubject(r.subject))
		cancel()
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		r.scanned = raw.Sequence
		if err := r.add(raw.Header, raw.Data); err != nil {
			return err
		}
	}
}
