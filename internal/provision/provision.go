// Package provision creates (or updates) the streams, consumers and buckets
// of the pipeline. Every stage calls it at start-up, so any stage can be the
// first to run against a fresh server; the calls are idempotent.
package provision

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/subjects"
)

// Config sizes the pipeline's storage.
type Config struct {
	// Storage is file (default) or memory.
	Storage jetstream.StorageType
	// Replicas is 1 on a single node, 3 on a cluster.
	Replicas int
	// MaxAge bounds how long events, results and leases are kept (default 24 h).
	MaxAge time.Duration
	// Keep is how long a turn's out subject (its results and turn_done)
	// is kept, and so how long the pipeline remembers a finished turn: a
	// late or replayed event of it is answered, not run, within Keep, and
	// a client can read the turn again (default MaxAge). Each kept turn
	// costs the server about 200 bytes of memory (docs/jetstream.md,
	// Retention). It must outlast the longest pause between two results
	// of a turn: the out subject is reorder's cursor, and a turn whose
	// subject expired while it ran would be delivered again from its start.
	Keep time.Duration
	// Dedup is the Nats-Msg-Id window (default DefaultDedup).
	Dedup time.Duration
	// LeaseTTL is how long an idle lease lives (default 1 h).
	LeaseTTL time.Duration
	// MaxPending bounds the events waiting in the in stream for a router
	// (default DefaultMaxPending); beyond it a publish is refused, and
	// the client slows its producer down (client.ErrSlowDown).
	MaxPending int
}

// DefaultMaxPending is Config.MaxPending when it is 0: 17–33 s of a
// router's work at the 3,000–6,000 events/s measured here, and, at the
// roughly 500 bytes an event waiting costs the server (an index entry and a
// message id), an estimated 50 MB of its memory.
const DefaultMaxPending = 100_000

// DefaultDedup is the Nats-Msg-Id window. It covers a publish retried
// after a timeout or a quick redelivery; nothing depends on it for
// correctness (a repeated tool_use or dispatch finds its call in the lease,
// results and out messages are kept single by subject rules), and the
// server holds every id of the window in memory: at 2,000 calls/s a 2 min
// window was the largest part of the server's heap.
const DefaultDedup = 10 * time.Second

func (c Config) withDefaults() Config {
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.MaxAge == 0 {
		c.MaxAge = 24 * time.Hour
	}
	if c.Keep == 0 {
		c.Keep = c.MaxAge
	}
	if c.Dedup == 0 {
		c.Dedup = DefaultDedup
	}
	if c.LeaseTTL == 0 {
		c.LeaseTTL = lease.DefaultTTL
	}
	if c.MaxPending == 0 {
		c.MaxPending = DefaultMaxPending
	}
	return c
}

// Streams creates the streams and the lease bucket. With Replicas 0 it
// replicates three times when the connection's server is a member of a
// cluster, else once. A JetStream that cannot serve it yet (a cluster
// forming) fails it with an error jserr.Unavailable reads; pipeline.Start
// and pipeline.Provision try again then.
func Streams(ctx context.Context, js jetstream.JetStream, sp subjects.Space, c Config) error {
	if c.Replicas == 0 && js.Conn().ConnectedClusterName() != "" {
		c.Replicas = 3
	}
	return streams(ctx, js, sp, c.withDefaults())
}

func streams(ctx context.Context, js jetstream.JetStream, sp subjects.Space, c Config) error {
	streams := []jetstream.StreamConfig{
		{
			// Interest: an event is removed once the router has acked it,
			// so a finished turn leaves nothing here (docs/jetstream.md,
			// Retention).
			Name: sp.InStream(), Subjects: []string{sp.InAll()}, Retention: jetstream.InterestPolicy,
			MaxMsgs: int64(c.MaxPending), Discard: jetstream.DiscardNew,
			Description: "tool_use, turn_end, turn_cancel and turn_discard events, until the router has them",
		},
		{
			Name: sp.ExecStream(), Subjects: []string{sp.ExecAll()}, Retention: jetstream.WorkQueuePolicy,
			Description: "routed calls, one work queue per pool",
		},
		{
			// One message per subject, and a second one is refused: a call
			// has exactly one result whatever the attempts. Interest: a
			// result is removed once reorder has it in the out stream,
			// whose cursor then turns away any later copy.
			Name: sp.ResultStream(), Subjects: []string{sp.ResultAll()}, Retention: jetstream.InterestPolicy,
			MaxMsgsPerSubject: 1, Discard: jetstream.DiscardNew, DiscardNewPerSubject: true,
			Description: "one result per call and each turn's end marker, in any order, until reorder has them",
		},
		{
			Name: sp.OutStream(), Subjects: []string{sp.OutAll()}, MaxMsgsPerSubject: outPerTurn, MaxAge: c.Keep,
			Description: "each turn's results in call order, then turn_done (or the last result marked ce-turndone)",
		},
		{
			Name: sp.ApprovalStream(), Subjects: []string{sp.ApprovalAll()},
			Description: "approval requests for calls a rule asks about, and their decisions",
		},
		{
			Name: sp.DLQStream(), Subjects: []string{sp.DLQAll()}, MaxAge: 7 * 24 * time.Hour,
			Description: "messages a stage could not process, with the reason",
		},
	}
	for _, sc := range streams {
		sc.Storage = c.Storage
		sc.Replicas = c.Replicas
		if sc.MaxAge == 0 {
			sc.MaxAge = c.MaxAge
		}
		// The server refuses a window longer than the stream keeps.
		sc.Duplicates = min(c.Dedup, sc.MaxAge)
		// A replica may answer a direct get before it has the newest
		// messages. Alone, every read is the one server's; in a cluster
		// the reads go to the stream's leader, because some decide
		// without a write that would catch a stale answer: the router's
		// check that a turn it has no lease for is new reads the result
		// and out streams (docs/jetstream.md, Clustering). The out and
		// approval streams allow direct gets anyway, for the clients: a
		// stale read of a turn's last message only delays a result the
		// client's subscription brings too. The stages read those two
		// from the leader (package leaderget).
		sc.AllowDirect = c.Replicas == 1 || sc.Name == sp.OutStream() || sc.Name == sp.ApprovalStream()
		var err error
		if consumer, ok := interestConsumers(sp)[sc.Name]; ok {
			err = ensureInterest(ctx, js, sp, sc, consumer)
		} else {
			err = ensureStream(ctx, js, sc)
		}
		if err != nil {
			return fmt.Errorf("provision: stream %s: %w", sc.Name, err)
		}
	}
	err := ensureKeyValue(ctx, js, jetstream.KeyValueConfig{
		Bucket:      sp.LeaseBucket(),
		Description: "per-turn lease: call states, safe flags, turn context",
		History:     1,
		Storage:     c.Storage,
		Replicas:    c.Replicas,
		// Turns on per-key TTLs (and the delete markers on expiry). The
		// markers are kept short: each holds its key in the server's
		// memory, and only the watches, in real time, need them.
		LimitMarkerTTL: 5 * time.Second,
		// Every stored write, with its revision, for the workers watching
		// the turn (lease.Watcher): they write next without reading first.
		RePublish: &jetstream.RePublish{Source: sp.LeaseChangesSource(), Destination: sp.LeaseChangesDestination()},
	})
	if err != nil {
		return fmt.Errorf("provision: bucket %s: %w", sp.LeaseBucket(), err)
	}
	err = ensureKeyValue(ctx, js, jetstream.KeyValueConfig{
		Bucket:         sp.ToolsBucket(),
		Description:    "tools advertised by live workers of each pool",
		History:        1,
		Storage:        c.Storage,
		Replicas:       c.Replicas,
		LimitMarkerTTL: time.Minute,
	})
	if err != nil {
		return fmt.Errorf("provision: bucket %s: %w", sp.ToolsBucket(), err)
	}
	oc := jetstream.ObjectStoreConfig{
		Bucket:      sp.BlobBucket(),
		Description: "results too long for the model, in full",
		TTL:         c.MaxAge,
		Storage:     c.Storage,
		Replicas:    c.Replicas,
	}
	if _, err = js.CreateObjectStore(ctx, oc); errors.Is(err, jetstream.ErrBucketExists) {
		_, err = js.UpdateObjectStore(ctx, oc)
	}
	if err != nil {
		return fmt.Errorf("provision: object store %s: %w", sp.BlobBucket(), err)
	}
	return nil
}

// ensureStream makes the stream, or brings an existing one to sc. A create
// with the config the stream has already changes nothing, so only a stream
// that differs is updated: several stages start at once and each
// provisions, and an update racing another process's consumer creation on
// the same stream is a data race inside the server (its store's config is
// rewritten while the consumer reads it).
func ensureStream(ctx context.Context, js jetstream.JetStream, sc jetstream.StreamConfig) error {
	_, err := js.CreateStream(ctx, sc)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		_, err = js.UpdateStream(ctx, sc)
	}
	return err
}

// ensureKeyValue is ensureStream for a bucket.
func ensureKeyValue(ctx context.Context, js jetstream.JetStream, kc jetstream.KeyValueConfig) error {
	_, err := js.CreateKeyValue(ctx, kc)
	if errors.Is(err, jetstream.ErrBucketExists) {
		_, err = js.UpdateKeyValue(ctx, kc)
	}
	return err
}

// ConsumerConfig is shared by the durable consumers below.
type ConsumerConfig struct {
	// AckWait is how long a message may be held without InProgress.
	AckWait time.Duration
	// MaxAckPending bounds the messages out at once over all workers.
	MaxAckPending int
	// MaxDeliver bounds redeliveries of one message.
	MaxDeliver int
}

// Consumer defaults: a message may be held 5 s without InProgress, 1,000
// may be out at once, and one is delivered at most 20 times. The router and
// the reorder hold a message for milliseconds (at most half a second of
// in-process retries, stage.later); the ack wait is how long a delivery
// that never reached them waits to come again — as when the node of the
// consumer's leader dies with it in flight — and so bounds how long a turn
// stalls then. The executor sets its own, from the claim deadline.
const (
	DefaultAckWait       = 5 * time.Second
	DefaultMaxAckPending = 1000
	DefaultMaxDeliver    = 20
)

// WithDefaults fills the zero fields of c; the stages read MaxDeliver from
// it to know a message's last delivery.
func (c ConsumerConfig) WithDefaults() ConsumerConfig {
	if c.AckWait == 0 {
		c.AckWait = DefaultAckWait
	}
	if c.MaxAckPending == 0 {
		c.MaxAckPending = DefaultMaxAckPending
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = DefaultMaxDeliver
	}
	return c
}

// Consumer creates or updates a durable pull consumer on stream.
func Consumer(ctx context.Context, js jetstream.JetStream, stream, name, filter string, c ConsumerConfig) (jetstream.Consumer, error) {
	cons, err := js.CreateOrUpdateConsumer(ctx, stream, consumerConfig(name, filter, c))
	if err != nil {
		return nil, fmt.Errorf("provision: consumer %s on %s: %w", name, stream, err)
	}
	return cons, nil
}

// interestConsumers are the durable consumers of the interest streams, by
// stream.
func interestConsumers(sp subjects.Space) map[string]string {
	return map[string]string{sp.InStream(): sp.RouterConsumer(), sp.ResultStream(): sp.ReorderConsumer()}
}

// ensureInterest is ensureStream for an interest stream, whose consumer
// must exist before the stream takes a single event: an interest stream
// acknowledges an event no consumer wants, then drops it, so a call
// published while the stream was new would be lost (its client told it
// was stored), and its turn never complete. A new stream is made first on
// a subject nothing publishes on (Space.Unbound), then its consumer, with
// the defaults (a stage binding later sets its own), then the stream gets
// its subjects: until then a publish finds no stream and is refused, and
// the client sends it again. Several processes may provision at once;
// each makes sure of the consumer before it gives the stream its subjects.
func ensureInterest(ctx context.Context, js jetstream.JetStream, sp subjects.Space, sc jetstream.StreamConfig, consumer string) error {
	unbound := sc
	unbound.Subjects = []string{sp.Unbound(sc.Name)}
	if _, err := js.CreateStream(ctx, unbound); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return err
	}
	// No filter: the consumer takes the stream's subjects, whichever they
	// are, the unbound one first.
	_, err := js.CreateConsumer(ctx, sc.Name, consumerConfig(consumer, "", ConsumerConfig{}))
	if err != nil && !errors.Is(err, jetstream.ErrConsumerExists) {
		return fmt.Errorf("consumer %s: %w", consumer, err)
	}
	return ensureStream(ctx, js, sc)
}

func consumerConfig(name, filter string, c ConsumerConfig) jetstream.ConsumerConfig {
	c = c.WithDefaults()
	return jetstream.ConsumerConfig{
		Durable:       name,
		FilterSubject: filter,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.AckWait,
		MaxAckPending: c.MaxAckPending,
		MaxDeliver:    c.MaxDeliver,
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}
}

// outPerTurn bounds a turn's out subject far above any turn's results. A
// per-subject bound also makes the server write the stream in 4 MB blocks
// rather than 8 MB ones, and it keeps the blocks it writes in memory.
const outPerTurn = 1 << 20
