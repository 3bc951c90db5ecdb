// Package reader answers clients' gap reads: the messages of a turn's out
// subject, or of its approval requests, stored after a stream sequence.
//
// A client follows a turn with a core subscription and reads the stream
// only for what the subscription missed (client.Results). Reading through
// a consumer of its own would need the consumer API, which no tenant may
// have (docs/tenants.md), and costs the server a consumer per read. So the
// stages read for it: a queue group of readers, run next to the reorder,
// answers a request on subjects.Read. The tenant of the read is the
// request subject's, which the server's permissions hold each tenant to;
// nothing in the request body names a subject.
package reader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/leaderget"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// Defaults of Config.
const (
	DefaultMaxMsgs     = 256
	DefaultMaxBytes    = 4 << 20
	DefaultConcurrency = 16
)

// Config configures a reader.
type Config struct {
	Space subjects.Space
	// MaxMsgs and MaxBytes bound one read's reply (default DefaultMaxMsgs,
	// DefaultMaxBytes); the client asks again after the last sequence.
	MaxMsgs, MaxBytes int
	// Concurrency bounds the reads under way at once (default
	// DefaultConcurrency); further requests wait for one to finish.
	Concurrency int
	Log         *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.MaxMsgs <= 0 {
		c.MaxMsgs = DefaultMaxMsgs
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Reader answers read requests on its connection until Run returns.
type Reader struct {
	cfg     Config
	nc      *nats.Conn
	streams map[string]*leaderget.Stream
}

// New returns a reader on nc; the streams it reads are the out and
// approval streams of cfg.Space.
func New(nc *nats.Conn, cfg Config) (*Reader, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Space.Check(); err != nil {
		return nil, fmt.Errorf("reader: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("reader: %w", err)
	}
	sp := cfg.Space
	streams := map[string]*leaderget.Stream{}
	for _, name := range []string{sp.OutStream(), sp.ApprovalStream()} {
		// From the leader: the client reads after a gap it saw, and a
		// replica behind it would make it ask again.
		streams[name] = leaderget.New(js, sp, name)
	}
	return &Reader{cfg: cfg, nc: nc, streams: streams}, nil
}

// Run answers requests until ctx ends, then waits for the reads under way.
func (r *Reader) Run(ctx context.Context) error {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		closed bool // no read starts once set
	)
	slots := make(chan struct{}, r.cfg.Concurrency)
	sub, err := r.nc.QueueSubscribe(r.cfg.Space.ReadAll(), r.cfg.Space.ReadGroup(), func(m *nats.Msg) {
		mu.Lock()
		if closed {
			mu.Unlock()
			return
		}
		wg.Add(1)
		mu.Unlock()
		// Waiting here holds the subscription's next requests back: the
		// reads under way bound what one reader asks of JetStream.
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			wg.Done()
			return
		}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			r.answer(ctx, m)
		}()
	})
	if err != nil {
		return fmt.Errorf("reader: %w", err)
	}
	// The server has the subscription before a request can count on it.
	err = r.nc.Flush()
	if err == nil {
		<-ctx.Done()
	}
	_ = sub.Unsubscribe()
	mu.Lock()
	closed = true
	mu.Unlock()
	wg.Wait()
	if err != nil {
		return fmt.Errorf("reader: %w", err)
	}
	return nil
}

// answer replies to one request: each message after the requested
// sequence, then the end marker; a bad request or a failed read gets an
// error marker instead of the end marker.
func (r *Reader) answer(ctx context.Context, m *nats.Msg) {
	// The reply goes only to an inbox, and of the tenants' inboxes only
	// to the requester's, or to the reply the server made for a request
	// through a tenant's import (subjects.Space.ReplyAllowed), checked
	// before anything else; the subscription's filter gives every subject
	// its tenant token, even one that does not parse.
	if !r.cfg.Space.ReplyAllowed(tenantOf(m.Subject), m.Reply) {
		r.cfg.Log.Warn("reader: refused a reply subject that is neither the tenant's inbox nor an import's", "subject", m.Subject, "reply", m.Reply)
		return
	}
	p, err := r.cfg.Space.ParseRead(m.Subject)
	if err != nil {
		r.fail(m.Reply, err)
		return
	}
	req, err := schemas.DecodeReadRequest(m.Data)
	if err != nil {
		r.fail(m.Reply, fmt.Errorf("%s: %w", m.Subject, err))
		return
	}
	more, err := r.read(ctx, p, req.After, m.Reply)
	if err != nil {
		r.fail(m.Reply, fmt.Errorf("%s: %w", m.Subject, err))
		return
	}
	if err := r.nc.PublishMsg(&nats.Msg{Subject: m.Reply, Header: schemas.ReadEnd(more)}); err != nil {
		r.cfg.Log.Warn("reader: reply", "subject", m.Subject, "err", err)
	}
}

// tenantOf is the second token of subject.
func tenantOf(subject string) string {
	_, rest, _ := strings.Cut(subject, ".")
	tenant, _, _ := strings.Cut(rest, ".")
	return tenant
}

// read sends the messages of the read p names stored after sequence
// after, up to the bounds, and reports whether the bounds stopped it.
func (r *Reader) read(ctx context.Context, p subjects.Parsed, after uint64, reply string) (more bool, err error) {
	name, subject := r.cfg.Space.ReadSubject(p.Tenant, p.Kind, p.Turn)
	stream := r.streams[name]
	sent, bytes := 0, 0
	for seq := after + 1; ; {
		if sent >= r.cfg.MaxMsgs || bytes >= r.cfg.MaxBytes {
			return true, nil
		}
		raw, err := stream.Next(ctx, seq, subject)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		msg := &nats.Msg{Subject: reply, Header: schemas.ReadItem(raw.Header, raw.Sequence), Data: raw.Data}
		if err := r.nc.PublishMsg(msg); err != nil {
			return false, fmt.Errorf("reply with stream sequence %d: %w", raw.Sequence, err)
		}
		sent++
		bytes += len(raw.Data)
		for _, v := range raw.Header {
			for _, s := range v {
				bytes += len(s)
			}
		}
		seq = raw.Sequence + 1
	}
}

// fail answers a request with an error marker saying why.
func (r *Reader) fail(reply string, cause error) {
	r.cfg.Log.Info("reader: refused a read", "err", cause)
	if err := r.nc.PublishMsg(&nats.Msg{Subject: reply, Header: schemas.ReadFailed(cause.Error())}); err != nil {
		r.cfg.Log.Warn("reader: reply", "err", err)
	}
}
