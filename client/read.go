package client

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/jserr"
)

// The client reads the streams only in ways whose JetStream API subject
// names the subject read: a direct get of a subject's last message, and a
// consumer whose filter is in its create subject. A tenant's NATS user can
// then be allowed exactly its own subjects (subjects.TenantPermissions),
// and never needs a stream's info, which lists every tenant's subjects.

// stored is one message read from a stream.
type stored struct {
	seq    uint64
	header nats.Header
	data   []byte
}

// lastMsg returns the last message stored on subject in stream, or
// jetstream.ErrMsgNotFound. A stream that allows no direct gets (a
// replicated one, docs/jetstream.md) has no responder for it, and is read
// through a consumer instead.
func (c *Client) lastMsg(ctx context.Context, stream, subject string) (*stored, error) {
	rctx, cancel := jserr.Bound(ctx)
	defer cancel()
	m, err := c.nc.RequestWithContext(rctx, c.cfg.Space.DirectGetLast(stream, subject), nil)
	if errors.Is(err, nats.ErrNoResponders) {
		var last *stored
		err := c.readFrom(ctx, stream, subject, 0, true, func(s *stored) error { last = s; return nil })
		if err == nil && last == nil {
			err = jetstream.ErrMsgNotFound
		}
		return last, err
	}
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

// consumerIdle is how long the server keeps a reading consumer the client
// could not delete (its connection dropped): they are meant to live for
// one read.
const consumerIdle = 10 * time.Second

// readFrom calls fn with each message stored on subject in stream from
// stream sequence from on (0: the first), or only the last one, as they
// were when it started. It reads through a consumer filtered to subject
// that it deletes when done.
func (c *Client) readFrom(ctx context.Context, stream, subject string, from uint64, last bool, fn func(*stored) error) error {
	cfg := jetstream.ConsumerConfig{
		FilterSubject:     subject,
		AckPolicy:         jetstream.AckNonePolicy,
		MemoryStorage:     true,
		Replicas:          1,
		InactiveThreshold: consumerIdle,
	}
	switch {
	case last:
		cfg.DeliverPolicy = jetstream.DeliverLastPolicy
	case from > 1:
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from
	}
	cctx, cancel := jserr.Bound(ctx)
	cons, err := c.js.CreateConsumer(cctx, stream, cfg)
	cancel()
	if err != nil {
		return fmt.Errorf("read %s: %w", subject, err)
	}
	name := cons.CachedInfo().Name
	defer func() {
		dctx, cancel := jserr.Bound(context.Background())
		defer cancel()
		_ = c.js.DeleteConsumer(dctx, stream, name)
	}()
	for left := cons.CachedInfo().NumPending; left > 0; {
		got, err := fetch(ctx, cons, int(min(left, 256)), fn)
		if err != nil {
			return fmt.Errorf("read %s: %w", subject, err)
		}
		if got == 0 {
			// What was pending expired meanwhile (the stream's MaxAge).
			return nil
		}
		left -= uint64(got)
	}
	return nil
}

// fetch calls fn with up to n messages of cons, waiting at most one
// request's bound for them, and returns how many there were.
func fetch(ctx context.Context, cons jetstream.Consumer, n int, fn func(*stored) error) (int, error) {
	fctx, cancel := jserr.Bound(ctx)
	defer cancel()
	batch, err := cons.Fetch(n, jetstream.FetchContext(fctx))
	if err != nil {
		return 0, err
	}
	got := 0
	for m := range batch.Messages() {
		got++
		md, err := m.Metadata()
		if err != nil {
			return got, err
		}
		if err := fn(&stored{seq: md.Sequence.Stream, header: m.Headers(), data: m.Data()}); err != nil {
			return got, err
		}
	}
	if err := batch.Error(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return got, err
	}
	return got, nil
}
