package client

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/schemas"
)

// The client reads the streams in two ways only, both held to the
// tenant's own subjects by the subject they are asked on: a direct get of
// a subject's last message (its JetStream API subject names the subject
// read), and a gap read, asked of the stages (package reader) on the
// tenant's read subject. A tenant's NATS user is then allowed exactly its
// own subjects and no consumer API (subjects.TenantPermissions), and a read
// leaves no state on the server.

// stored is one message read from a stream.
type stored struct {
	seq    uint64
	header nats.Header
	data   []byte
}

// lastMsg returns the last message stored on subject in stream, or
// jetstream.ErrMsgNotFound. The stream allows direct gets; in a cluster
// any replica may answer, possibly from behind the leader: the reads here
// only look for what the live subscription missed, which such a read
// delays until a later one.
func (c *Client) lastMsg(ctx context.Context, stream, subject string) (*stored, error) {
	rctx, cancel := jserr.Bound(ctx)
	defer cancel()
	m, err := c.nc.RequestWithContext(rctx, c.cfg.Space.DirectGetLast(stream, subject), nil)
	if err != nil {
		return nil, err
	}
	if len(m.Data) == 0 && m.Header.Get("Status") != "" {
		if m.Header.Get("Status") == "404" {
			return nil, jetstream.ErrMsgNotFound
		}
		return nil, fmt.Errorf("direct get of %s: %s %s", subject, m.Header.Get("Status"), m.Header.Get("Description"))
	}
	seq, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("direct get of %s: bad %s header: %w", subject, jetstream.SequenceHeader, err)
	}
	return &stored{seq: seq, header: m.Header, data: m.Data}, nil
}

// errReadCut is wrapped by the error of a gap read that ended before its
// end marker, or with an error marker: the read is made again later.
var errReadCut = errors.New("read cut short")

// readAfter calls fn with each message of the turn's subject of kind
// (subjects.ReadOut, subjects.ReadApprovals) stored after stream sequence
// after, in order, as the stages read them from the stream. It asks again
// from the last sequence until a read says nothing remains, and returns
// nil only then: a read cut short (a timeout, a reader stopping) returns an
// error, and its caller reads again from where it last completed.
func (c *Client) readAfter(ctx context.Context, kind, turn string, after uint64, fn func(*stored) error) error {
	subject := c.cfg.Space.Read(c.cfg.Tenant, kind, turn)
	for {
		last, more, err := c.readOnce(ctx, subject, after, fn)
		if err != nil {
			return fmt.Errorf("read %s after %d: %w", subject, after, err)
		}
		if !more {
			return nil
		}
		after = last
	}
}

// readOnce makes one read request and calls fn with each message of its
// answer; it returns the last sequence read (after when none) and whether
// messages remain past the read's bound.
func (c *Client) readOnce(ctx context.Context, subject string, after uint64, fn func(*stored) error) (last uint64, more bool, err error) {
	inbox := c.nc.NewInbox()
	sub, err := c.nc.SubscribeSync(inbox)
	if err != nil {
		return after, false, err
	}
	defer sub.Unsubscribe()
	if err := c.nc.PublishRequest(subject, inbox, schemas.EncodeReadRequest(schemas.ReadRequest{After: after})); err != nil {
		return after, false, err
	}
	last = after
	for {
		// Each reply of a read comes within a request's bound of the one
		// before: the reader gets one stored message per request.
		wctx, cancel := jserr.Bound(ctx)
		m, err := sub.NextMsgWithContext(wctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return last, false, ctx.Err()
			}
			return last, false, fmt.Errorf("%w: %w", errReadCut, err)
		}
		if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
			return last, false, nats.ErrNoResponders
		}
		r, err := schemas.ParseReadReply(m.Header)
		switch {
		case errors.Is(err, schemas.ErrReadFailed):
			return last, false, fmt.Errorf("%w: %w", errReadCut, err)
		case err != nil:
			return last, false, err
		case r.End:
			return last, r.More, nil
		case r.Seq <= last:
			return last, false, fmt.Errorf("read reply with stream sequence %d after %d", r.Seq, last)
		}
		if err := fn(&stored{seq: r.Seq, header: m.Header, data: m.Data}); err != nil {
			return last, false, err
		}
		last = r.Seq
	}
}

// readAgain reports whether a failed read may be made again later: the
// stream or the stages could not answer for now.
func readAgain(err error) bool {
	return jserr.Unavailable(err) || errors.Is(err, errReadCut)
}
