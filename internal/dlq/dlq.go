// Package dlq is the operator's side of the dead-letter stream: it lists
// and shows the messages the stages gave up on, with the reason each was
// given up, and sends one back to the subject it first came on once what
// made it fail is fixed.
package dlq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// Letter is one dead-lettered message.
type Letter struct {
	// Seq is its sequence in the dead-letter stream, which names it.
	Seq  uint64
	Time time.Time
	// Tenant and Stage are from its dead-letter subject.
	Tenant, Stage string
	// Original is the subject it was first published on, Reason why the
	// stage gave up on it.
	Original string
	Reason   string
	// Header and Data are the message as the stage got it: its event
	// headers (and the dead letter's own), its body.
	Header nats.Header
	Data   []byte
}

// Filter selects dead letters; empty fields match all.
type Filter struct {
	Tenant, Stage string
	// Limit bounds how many are returned (0: all).
	Limit int
}

// ErrNotFound is the error of a sequence that holds no dead letter.
var ErrNotFound = errors.New("dlq: no such dead letter")

// Reader reads and replays the dead letters of one subject space.
type Reader struct {
	js     jetstream.JetStream
	sp     subjects.Space
	stream jetstream.Stream
}

// New binds to the dead-letter stream of sp (which provision creates).
func New(ctx context.Context, js jetstream.JetStream, sp subjects.Space) (*Reader, error) {
	s, err := js.Stream(ctx, sp.DLQStream())
	if err != nil {
		return nil, fmt.Errorf("dlq: stream %s: %w", sp.DLQStream(), err)
	}
	return &Reader{js: js, sp: sp, stream: s}, nil
}

// List returns the dead letters f selects, oldest first. It reads them
// one at a time (a direct get of the next on the filter), so a long
// stream costs as much as the letters asked for.
func (r *Reader) List(ctx context.Context, f Filter) ([]Letter, error) {
	for _, v := range []struct{ name, value string }{{"tenant", f.Tenant}, {"stage", f.Stage}} {
		if v.value != "" {
			if err := subjects.CheckToken(v.name, v.value); err != nil {
				return nil, fmt.Errorf("dlq: %w", err)
			}
		}
	}
	tenant, stage := f.Tenant, f.Stage
	if tenant == "" {
		tenant = "*"
	}
	if stage == "" {
		stage = "*"
	}
	filter := r.sp.DLQ(tenant, stage)
	var out []Letter
	for seq := uint64(1); f.Limit <= 0 || len(out) < f.Limit; {
		raw, err := r.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(filter))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return out, fmt.Errorf("dlq: read from %d: %w", seq, err)
		}
		out = append(out, r.letter(raw))
		seq = raw.Sequence + 1
	}
	return out, nil
}

// Get returns the dead letter at seq.
func (r *Reader) Get(ctx context.Context, seq uint64) (Letter, error) {
	raw, err := r.stream.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return Letter{}, fmt.Errorf("%w at %d", ErrNotFound, seq)
	}
	if err != nil {
		return Letter{}, fmt.Errorf("dlq: read %d: %w", seq, err)
	}
	return r.letter(raw), nil
}

func (r *Reader) letter(raw *jetstream.RawStreamMsg) Letter {
	l := Letter{
		Seq: raw.Sequence, Time: raw.Time, Header: raw.Header, Data: raw.Data,
		Original: raw.Header.Get(schemas.HeaderDLQSubject), Reason: raw.Header.Get(schemas.HeaderDLQReason),
		Stage: raw.Header.Get(schemas.HeaderDLQStage),
	}
	if p, err := r.sp.ParseDLQ(raw.Subject); err == nil {
		l.Tenant = p.Tenant
		if l.Stage == "" {
			l.Stage = p.Kind
		}
	}
	return l
}

// Replay publishes the letter's message again to the subject it first came
// on, with its event headers, for its stage to handle anew; it returns the
// sequence the message was stored at. The subject must be one a stage
// consumes (an input event, a dispatch or a result of this space): a dead
// letter does not choose where it goes. With remove, the letter leaves the
// dead-letter stream once the message is stored again.
//
// A message sent back is handled as any other: a call whose turn went on
// without it is answered as late, and a result whose slot another result
// already holds is refused by the result stream (an error here).
func (r *Reader) Replay(ctx context.Context, l Letter, remove bool) (uint64, error) {
	if !r.consumed(l.Original) {
		return 0, fmt.Errorf("dlq: letter %d: %q is not a subject a stage consumes; not replayed", l.Seq, l.Original)
	}
	m := nats.NewMsg(l.Original)
	// Only the event's own headers: the dead letter's, or a stored
	// message's server headers, would make the copy fail or be filed wrong.
	m.Header = schemas.EventHeaders(l.Header)
	m.Data = l.Data
	ack, err := r.js.PublishMsg(ctx, m)
	if err != nil {
		return 0, fmt.Errorf("dlq: replay letter %d to %s: %w", l.Seq, l.Original, err)
	}
	if remove {
		if err := r.stream.DeleteMsg(ctx, l.Seq); err != nil {
			return ack.Sequence, fmt.Errorf("dlq: letter %d replayed, not removed: %w", l.Seq, err)
		}
	}
	return ack.Sequence, nil
}

// consumed says whether subject is one of the stages' own.
func (r *Reader) consumed(subject string) bool {
	for _, parse := range []func(string) (subjects.Parsed, error){r.sp.ParseIn, r.sp.ParseExec, r.sp.ParseResult} {
		if _, err := parse(subject); err == nil {
			return true
		}
	}
	return false
}
