package lease

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/stage"
	"github.com/toolwire/toolwire/subjects"
)

// DefaultTTL is how long a turn's lease lives after its last change.
const DefaultTTL = time.Hour

// maxAttempts bounds one Update's compare-and-set loop. Conflicts are normal
// (every call of a turn writes the same key), so the bound is generous.
const maxAttempts = 200

// ErrContention is returned when an update lost the race maxAttempts times.
var ErrContention = errors.New("lease: too much contention on the turn's key")

// ErrNoChange may be returned by an update function to leave the lease as it is.
var ErrNoChange = errors.New("lease: no change")

// Store reads and writes turn leases in the KV bucket.
type Store struct {
	js    jetstream.JetStream
	kv    jetstream.KeyValue
	space subjects.Space
	ttl   time.Duration
}

// NewStore binds to the lease bucket (which provision creates).
func NewStore(ctx context.Context, js jetstream.JetStream, space subjects.Space, ttl time.Duration) (*Store, error) {
	kv, err := js.KeyValue(ctx, space.LeaseBucket())
	if err != nil {
		return nil, fmt.Errorf("lease: bind bucket %s: %w", space.LeaseBucket(), err)
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Store{js: js, kv: kv, space: space, ttl: ttl}, nil
}

// Get returns a turn's lease and its revision; jetstream.ErrKeyNotFound when none.
func (s *Store) Get(ctx context.Context, tenant, turn string) (*schemas.Lease, uint64, error) {
	e, err := s.kv.Get(ctx, s.space.LeaseKey(tenant, turn))
	if err != nil {
		return nil, 0, err
	}
	l, err := schemas.DecodeLease(e.Value())
	if err != nil {
		return nil, 0, err
	}
	return l, e.Revision(), nil
}

// Mutator changes a lease in place; it may be called several times (once per
// attempt) and must be a pure function of the lease it is given. It returns
// ErrNoChange to stop without writing.
type Mutator func(l *schemas.Lease) error

// Update applies fn to the turn's lease by compare-and-set, creating the
// lease (from fresh) when it does not exist. It returns the lease as written
// and its revision; with ErrNoChange from fn it returns the lease as read
// and a nil error.
func (s *Store) Update(ctx context.Context, tenant, turn string, fresh func() *schemas.Lease, fn Mutator) (*schemas.Lease, uint64, error) {
	return s.UpdateFrom(ctx, tenant, turn, nil, 0, fresh, fn)
}

// UpdateFrom is Update starting from a lease and revision the caller already
// holds (saving a read when nobody wrote since); a nil lease means read first.
func (s *Store) UpdateFrom(ctx context.Context, tenant, turn string, l *schemas.Lease, rev uint64, fresh func() *schemas.Lease, fn Mutator) (*schemas.Lease, uint64, error) {
	key := s.space.LeaseKey(tenant, turn)
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if l == nil {
			var err error
			l, rev, err = s.Get(ctx, tenant, turn)
			switch {
			case errors.Is(err, jetstream.ErrKeyNotFound):
				if fresh == nil {
					return nil, 0, fmt.Errorf("lease: turn %s/%s: %w", tenant, turn, err)
				}
				l, rev = fresh(), 0
			case err != nil:
				return nil, 0, fmt.Errorf("lease: read %s: %w", key, err)
			}
		}
		if err := fn(l); err != nil {
			if errors.Is(err, ErrNoChange) {
				return l, rev, nil
			}
			return nil, 0, err
		}
		nrev, err := s.write(ctx, tenant, turn, l, rev)
		if err == nil {
			return l, nrev, nil
		}
		if !isConflict(err) {
			return nil, 0, fmt.Errorf("lease: write %s: %w", key, err)
		}
		l = nil
		backoff(ctx, attempt)
	}
	return nil, 0, fmt.Errorf("%w: %s after %d attempts", ErrContention, key, maxAttempts)
}

// write stores l if the key is still at rev (0: the key must not exist). It
// publishes to the KV subject itself because kv.Update cannot set a per-key
// TTL and would drop the one Create set (nats-notes §2).
func (s *Store) write(ctx context.Context, tenant, turn string, l *schemas.Lease, rev uint64) (uint64, error) {
	l.Version++
	b, err := schemas.EncodeLease(l)
	if err != nil {
		return 0, err
	}
	if rev == 0 {
		r, err := s.kv.Create(ctx, s.space.LeaseKey(tenant, turn), b, jetstream.KeyTTL(s.ttl))
		if errors.Is(err, jetstream.ErrKeyExists) {
			return 0, errConflict
		}
		return r, err
	}
	m := nats.NewMsg(s.space.LeaseSubject(tenant, turn))
	m.Data = b
	ack, err := s.js.PublishMsg(ctx, m, jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(s.ttl))
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

var errConflict = errors.New("lease: revision conflict")

// isConflict classifies a failed compare-and-set: the KV sentinels, or the
// raw API codes 10071 (R1) and 10164 (replicated) of a raw publish.
func isConflict(err error) bool {
	if errors.Is(err, errConflict) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		return true
	}
	return stage.IsConflict(err)
}

func backoff(ctx context.Context, attempt int) {
	shift := min(attempt, 6)
	d := time.Duration(rand.Int64N(int64(50*time.Microsecond) << shift))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
