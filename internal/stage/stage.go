// Package stage is the runtime the pipeline's stages run on, in the spirit
// of Watermill: a stage is a Handler plus a Spec. The runtime owns
// everything around the handler — fetching, per-turn lanes, decoding the
// event under the limits, ack, nak with one back-off policy, dead letters
// with a reason, panic recovery, the last delivery — so that a stage
// cannot lose a call by forgetting one of them.
//
// Handlers classify their errors by type (errors.go): retry later (the
// default), fail (the stage gives up on the message: the call it names is
// answered with an error result saying why, and the message is
// dead-lettered), drop (dead-letter only: nothing is left to answer) and
// leave (the message stays unacknowledged for another instance). On a
// message's last delivery a retry becomes a failure, so every call that
// entered the pipeline gets exactly one result even when a stage cannot
// process it.
package stage

import (
	"context"
	"log/slog"
	"reflect"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"go.opentelemetry.io/otel/trace"
)

// Handler processes one decoded message. It returns nil when the message is
// done with (the runtime acks it) or an error the runtime classifies.
type Handler func(ctx context.Context, m *Msg) error

// Answerer answers the call a message names when the stage gives up on the
// message: cause says why, for the error result. m may be only partly
// decoded (Data nil, Meta.Seq -1) when decoding was what failed.
type Answerer func(ctx context.Context, m *Msg, cause error) error

// Msg is one message as a handler sees it.
type Msg struct {
	// Raw is the JetStream message; the runtime owns its ack.
	Raw jetstream.Msg
	// Subject is the message's subject, parsed.
	Subject subjects.Parsed
	// Meta and Data are the decoded event (Data nil when it did not decode).
	Meta schemas.Meta
	Data schemas.Data
	// Delivered counts the deliveries of the message, this one included.
	Delivered int
	// Attempt counts the handler's runs of this delivery, this one
	// included: the first retries of a delivery run in the process
	// (later.go) without a new delivery.
	Attempt int
	// Last is set on the message's last delivery: the server will not
	// deliver it again, so a retry here would lose it.
	Last bool
	// Recv ends when the stage stops receiving; a handler that waits
	// (a parked call) gives up then and returns Leave.
	Recv context.Context
}

// InProgress tells the server the message is still being worked on, so it
// is not redelivered while a long call runs or waits.
func (m *Msg) InProgress() { _ = m.Raw.InProgress() }

// Spec says what a stage consumes and how.
type Spec struct {
	// Stage names the stage in dead letters and hooks (subjects.StageRouter, …).
	Stage    string
	Space    subjects.Space
	Consumer jetstream.Consumer
	// MaxDeliver is the consumer's limit of deliveries (<= 0: none), which
	// tells the last delivery.
	MaxDeliver int
	// Parse reads the stage's subjects.
	Parse func(subject string) (subjects.Parsed, error)
	// Limits bound the events the stage decodes.
	Limits schemas.Limits
	// Batch is how many messages a pull asks for (default 256).
	Batch int
	// Lanes > 0 runs the messages of one turn in order on one of Lanes
	// goroutines; 0 runs each message on a goroutine of its own (for
	// handlers that park, as the executor's calls do).
	Lanes int
	// Together, when set, lets a lane handle at once a run of one turn's
	// messages, queued one behind the other, that it accepts (the
	// router's tool_use events: each call's own); every other message
	// waits for those before it, and they for it.
	Together func(p subjects.Parsed) bool
	// LaneDepth is how many messages a lane queues (default 64).
	LaneDepth int
	// Backoff spaces the retries of one message.
	Backoff Backoff
	// Answer answers the call of a message the stage gives up on (nil:
	// the stage has no call to answer, as for the reorder's end markers).
	Answer Answerer
	// Hooks are told of every message's outcome (metrics, tracing).
	Hooks Hooks
	Log   *slog.Logger
}

// Outcome is what became of one delivery.
type Outcome int

// The outcomes of a delivery.
const (
	Acked        Outcome = iota // done
	Retried                     // nak'ed with a delay
	DeadLettered                // given up on, its call answered where it names one
	Left                        // left unacknowledged for another instance
)

// String names the outcome in logs and metrics.
func (o Outcome) String() string {
	switch o {
	case Acked:
		return "acked"
	case Retried:
		return "retried"
	case DeadLettered:
		return "dead_lettered"
	case Left:
		return "left"
	}
	return "unknown"
}

// Hooks are called by the runtime and the stages (metrics, tracing); nil
// fields are skipped. They run on the stage's goroutines: they must be
// quick and must not block.
type Hooks struct {
	// Handled follows every delivery: what became of it and how long the
	// handler took.
	Handled func(Handling)
	// Call follows every call a stage settles: routed or rejected by the
	// router, finished by the executor, delivered by the reorder.
	Call func(CallEvent)
	// TracerProvider, when set, gives every delivery a span (package
	// tracing), and the executor's calls theirs; nil is no tracing.
	TracerProvider trace.TracerProvider
	// Started follows every call an executor claims to run, with how long
	// it was parked first (CallEvent.Waited).
	Started func(CallEvent)
	// Parked follows the calls an executor holds until their turn's start
	// rule lets them run: delta is +1 as a call parks, -1 as it stops
	// waiting (to run, answered, or left for another worker).
	Parked func(tenant string, delta int)
	// LeaseConflict follows every write of a turn's lease that another
	// writer's write refused (a compare-and-set conflict), by the stage
	// whose update led the write.
	LeaseConflict func(stage string)
}

// IsZero reports whether no hook is set. It looks at every field, so a
// hook added later counts without this method changing.
func (h Hooks) IsZero() bool { return reflect.ValueOf(h).IsZero() }

// Handling is one delivery's outcome.
type Handling struct {
	Stage, Tenant string
	Outcome       Outcome
	Took          time.Duration
	// Delivered is the message's delivery count: above 1, a redelivery.
	Delivered int
}

// CallEvent is one call settled by a stage.
type CallEvent struct {
	Stage, Tenant, Tool string
	// Outcome is routed or rejected (router), ok, error, cancelled (stopped
	// or halted by its turn), rejected (refused by the permission policy,
	// plan mode or a pool that does not host the tool) or handed_back
	// (executor), delivered (reorder).
	Outcome string
	// Ran is how long the tool ran (executor; 0 elsewhere).
	Ran time.Duration
	// E2E is from the call's tool_use being published to its result
	// being delivered in order (reorder; 0 when unknown).
	E2E time.Duration
	// Waited is how long a call the executor starts was parked, from its
	// receipt to its claim (Started; 0 for a call that never parked).
	Waited time.Duration
}

// OnCall tells the Call hook of e, if there is one.
func (h Hooks) OnCall(e CallEvent) {
	if h.Call != nil {
		h.Call(e)
	}
}

// DefaultLanes is how many turns a stage instance handles in parallel when
// its configuration does not say.
const DefaultLanes = 16

func (s *Spec) withDefaults() {
	if s.Batch <= 0 {
		s.Batch = 256
	}
	if s.LaneDepth <= 0 {
		s.LaneDepth = 64
	}
	s.Backoff = s.Backoff.WithDefaults()
	s.Limits = s.Limits.WithDefaults()
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
}
