package lease

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// DefaultTTL is how long a turn's lease lives after its last change.
const DefaultTTL = time.Hour

// FinishedTTL is how long a complete turn's lease lives (when the store's
// TTL is not shorter): finished turns must not pile up in the server's
// memory, which holds every key. Nothing needs the lease of a complete turn
// for long: a late event finds the turn over by its end marker or its out
// subject, and a redelivered dispatch without a lease is answered, not run,
// and its answer turned away by reorder.
const FinishedTTL = 15 * time.Second

// maxAttempts bounds one Update's compare-and-set loop. Conflicts are normal
// (every call of a turn writes the same key), so the bound is generous.
const maxAttempts = 200

// notifyWait bounds the wait for the watch to bring the write that refused
// one: about what a read of the lease takes.
const notifyWait = 2 * time.Millisecond

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

	mu     sync.Mutex
	queues map[string]*queue
	cache  *revCache
	// standing is the parked updates of each key (standing.go).
	standing map[string][]*Standing
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
	return &Store{js: js, kv: kv, space: space, ttl: ttl, queues: map[string]*queue{}, cache: newRevCache()}, nil
}

// Get reads a turn's lease and its revision from the bucket;
// jetstream.ErrKeyNotFound when none.
func (s *Store) Get(ctx context.Context, tenant, turn string) (*schemas.Lease, uint64, error) {
	key := s.space.LeaseKey(tenant, turn)
	sent := s.cache.now()
	ctx, cancel := jserr.Bound(ctx)
	defer cancel()
	e, err := s.kv.Get(ctx, key)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			s.cache.forget(key)
		}
		return nil, 0, err
	}
	l, err := schemas.DecodeLease(e.Value())
	if err != nil {
		return nil, 0, err
	}
	// The cache keeps its own copy: the caller may change l.
	s.cache.put(key, e.Value(), l.Clone(), e.Revision(), sent)
	return l, e.Revision(), nil
}

// Prime offers the lease as another stage last wrote it (the router's
// registration, carried by the dispatch): the next update tries its write
// on it. It is only a hint, trusted for nothing: an older one is ignored,
// and a decision not to write made on it is checked with a read.
func (s *Store) Prime(tenant, turn string, b []byte, rev uint64) {
	if len(b) == 0 || rev == 0 {
		return
	}
	s.cache.hint(s.space.LeaseKey(tenant, turn), b, rev)
}

// KnownTotal is the turn's count as this process last saw its lease, -1
// when it has seen none with a count. A count never changes once set, so
// a cached one is right however old the rest of the lease is.
func (s *Store) KnownTotal(tenant, turn string) int {
	if l, _, _, ok := s.cache.get(s.space.LeaseKey(tenant, turn)); ok {
		return l.Total
	}
	return -1
}

// Forget drops the turn's cached lease: the next update reads it.
func (s *Store) Forget(tenant, turn string) { s.cache.forget(s.space.LeaseKey(tenant, turn)) }

// Snapshot is a lease's encoding to Prime another process with; nil when
// it is too big to be worth carrying.
func Snapshot(l *schemas.Lease) []byte {
	b, err := schemas.EncodeLease(l)
	if err != nil || len(b) > maxSnapshot {
		return nil
	}
	return b
}

// maxSnapshot bounds what a dispatch carries: a read costs less than
// shipping a big turn's lease with each of its calls.
const maxSnapshot = 2048

// Mutator changes a lease in place. It may be called several times (once
// per attempt, after other writers' changes) and must be a pure function of
// the lease it is given; when it returns an error it must leave the lease
// as it found it. ErrNoChange stops it without writing.
type Mutator func(l *schemas.Lease) error

// Update applies fn to the turn's lease by compare-and-set, creating the
// lease (from fresh) when it does not exist; with a nil fresh, or one that
// returns nil, a missing lease is jetstream.ErrKeyNotFound. It returns the lease as written (or,
// with ErrNoChange from fn, as read) and its revision. The returned lease
// is the caller's to read and must not be changed.
//
// Updates of one turn from one process are combined: while one write is in
// flight the next ones queue, and the queue is applied in order in one
// compare-and-set. So the calls of a turn on one worker do not fight over
// the key; only writers in other processes cause conflicts.
func (s *Store) Update(ctx context.Context, tenant, turn string, fresh func() *schemas.Lease, fn Mutator) (*schemas.Lease, uint64, error) {
	key := s.space.LeaseKey(tenant, turn)
	o := &op{fresh: fresh, fn: fn, done: make(chan struct{}), lead: make(chan struct{})}
	s.mu.Lock()
	q, ok := s.queues[key]
	if !ok {
		q = &queue{}
		s.queues[key] = q
	}
	q.ops = append(q.ops, o)
	leader := !q.leading
	q.leading = true
	s.mu.Unlock()
	if mb := memberOf(ctx); mb != nil {
		// Queued: the member's part of the gathering is in.
		mb.settled()
		if leader {
			mb.waitOthers()
		}
	}
	if !leader {
		select {
		case <-o.done:
			return o.l, o.rev, o.err
		case <-o.lead:
		}
	}
	s.runBatch(ctx, tenant, turn, key, q)
	<-o.done
	return o.l, o.rev, o.err
}

// queue is the pending updates of one key.
type queue struct {
	ops     []*op
	leading bool
}

// op is one pending update and, once done, its outcome.
type op struct {
	fresh func() *schemas.Lease
	fn    Mutator
	// done is closed with the outcome; lead, when this op is handed the
	// leadership of its queue.
	done chan struct{}
	lead chan struct{}
	l    *schemas.Lease
	rev  uint64
	err  error
}

// batchTimeout bounds one batch: it runs on behalf of several callers, so
// the leader's own cancellation must not fail the others.
const batchTimeout = 30 * time.Second

// runBatch applies every queued update (the leader's among them) in one
// compare-and-set, then hands the leadership to the first update that
// queued meanwhile, so no caller runs other callers' batches for long.
func (s *Store) runBatch(ctx context.Context, tenant, turn, key string, q *queue) {
	s.mu.Lock()
	batch := q.ops
	q.ops = nil
	s.mu.Unlock()
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), batchTimeout)
	s.apply(bctx, tenant, turn, batch)
	cancel()
	for _, o := range batch {
		close(o.done)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(q.ops) == 0 {
		q.leading = false
		delete(s.queues, key)
		return
	}
	close(q.ops[0].lead)
}

// apply runs one batch: read, apply every mutator in order, write once;
// on a conflict, all over again from a fresh read.
func (s *Store) apply(ctx context.Context, tenant, turn string, batch []*op) {
	key := s.space.LeaseKey(tenant, turn)
	// The first attempt goes on the cached lease when there is one: the
	// read it saves is most of an update's cost.
	useCache := true
	for attempt := 0; attempt < maxAttempts; attempt++ {
		var l *schemas.Lease
		var rev uint64
		var err error
		unsure := false
		// A retry has seen the lease; the first attempt may not have.
		known, hit := !useCache, false
		if useCache {
			var trusted bool
			// The lease as this process last knew it, to try the write
			// on without reading.
			l, rev, trusted, hit = s.cache.get(key)
			known, unsure = hit, !trusted
		}
		switch {
		case hit:
		case attempt == 0 && !known && makesAll(batch):
			// A turn this process does not know is most likely new:
			// try to make its lease (the create refuses if it exists)
			// instead of reading first.
			err = jetstream.ErrKeyNotFound
		default:
			unsure = false
			l, rev, err = s.Get(ctx, tenant, turn)
		}
		useCache = false
		live := batch
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			l, rev, live = nil, 0, nil
			for _, o := range batch {
				if o.fresh == nil {
					o.err = fmt.Errorf("lease: turn %s/%s: %w", tenant, turn, err)
					continue
				}
				if l == nil {
					l = o.fresh()
				}
				if l == nil {
					// This update's fresh refused to make the lease.
					o.err = fmt.Errorf("lease: turn %s/%s: %w", tenant, turn, err)
					continue
				}
				live = append(live, o)
			}
			if l == nil {
				return
			}
		case err != nil:
			fail(batch, fmt.Errorf("lease: read %s: %w", key, err))
			return
		}
		changed := false
		for _, o := range live {
			o.err = o.fn(l)
			switch {
			case o.err == nil:
				changed = true
			case errors.Is(o.err, ErrNoChange):
				o.err = nil
			}
		}
		var stood []*Standing
		if rev > 0 && (changed || !unsure) {
			// The parked updates ride on this write, or make one of
			// their own when the cache can be trusted (a change notified).
			stood = s.runStanding(key, l)
			changed = changed || len(stood) > 0
		}
		if changed {
			// Only a write can bring a rejected call's place: settling
			// rides on the write that did.
			Settle(l)
		}
		if !changed && unsure {
			dropStanding(stood)
			// Not to write is a decision on what may be old: read and
			// decide again on the lease as it is.
			attempt--
			continue
		}
		if !changed {
			if rev == 0 {
				// Nothing to create: the lease still does not exist.
				for _, o := range live {
					if o.err == nil {
						o.err = fmt.Errorf("lease: turn %s/%s: %w", tenant, turn, jetstream.ErrKeyNotFound)
					}
				}
				return
			}
			settle(live, l, rev)
			return
		}
		nrev, err := s.write(ctx, tenant, turn, l, rev)
		if err == nil {
			settle(live, l, nrev)
			s.landStanding(stood, l, nrev)
			return
		}
		dropStanding(stood)
		if !isConflict(err) {
			// The write may or may not have landed: know nothing.
			s.cache.forget(key)
			fail(live, fmt.Errorf("lease: write %s: %w", key, err))
			return
		}
		conflicted(ctx)
		if s.cache.newer(key, rev, notifyWait) {
			// Another process's write refused ours, and the watch has
			// brought it: write again on it without reading.
			useCache = true
			continue
		}
		if unsure {
			// The cache was behind: read at once, no back-off (nobody
			// need be racing this write; the lease had moved on).
			continue
		}
		backoff(ctx, attempt)
	}
	fail(batch, fmt.Errorf("%w: %s after %d attempts", ErrContention, key, maxAttempts))
}

// makesAll says whether every update of the batch can make a missing lease.
func makesAll(batch []*op) bool {
	for _, o := range batch {
		if o.fresh == nil {
			return false
		}
	}
	return true
}

// settle hands the outcome to the batch's successful updates.
func settle(ops []*op, l *schemas.Lease, rev uint64) {
	for _, o := range ops {
		if o.err == nil {
			o.l, o.rev = l, rev
		}
	}
}

func fail(ops []*op, err error) {
	for _, o := range ops {
		o.err = err
	}
}

// write stores l if the key is still at rev (0: the key must not exist). It
// publishes to the KV subject itself because kv.Update cannot set a per-key
// TTL and would drop the one Create set (docs/jetstream.md, The lease).
func (s *Store) write(ctx context.Context, tenant, turn string, l *schemas.Lease, rev uint64) (uint64, error) {
	l.Version++
	b, err := schemas.EncodeLease(l)
	if err != nil {
		return 0, err
	}
	key := s.space.LeaseKey(tenant, turn)
	sent := s.cache.now()
	ttl := s.ttl
	if ttl > FinishedTTL && Complete(l) {
		ttl = FinishedTTL
	}
	ctx, cancel := jserr.Bound(ctx)
	defer cancel()
	if rev == 0 {
		r, err := s.kv.Create(ctx, key, b, jetstream.KeyTTL(ttl))
		if errors.Is(err, jetstream.ErrKeyExists) {
			return 0, errConflict
		}
		if err == nil {
			s.cache.put(key, b, l, r, sent)
		}
		return r, err
	}
	m := nats.NewMsg(s.space.LeaseSubject(tenant, turn))
	m.Data = b
	ack, err := s.js.PublishMsg(ctx, m, jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(ttl))
	if err != nil {
		return 0, err
	}
	s.cache.put(key, b, l, ack.Sequence, sent)
	return ack.Sequence, nil
}

var errConflict = errors.New("lease: revision conflict")

// isConflict classifies a failed compare-and-set: the KV sentinels, or the
// raw API codes 10071 (R1) and 10164 (replicated) of a raw publish.
func isConflict(err error) bool {
	if errors.Is(err, errConflict) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		return true
	}
	return jserr.Conflict(err)
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
