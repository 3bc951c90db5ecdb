// Package router is the pipeline's central dispatch. For each tool_use it
// resolves the tool, coerces and validates the input, answers unknown tools,
// incomplete calls and invalid input with an error result without
// dispatching them, registers the call in the turn's lease, and sends the
// routed call to its pool's work queue. For turn_end it records the number
// of calls in the lease and tells the reorder stage.
package router

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/coercion"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/hedge"
	"github.com/toolwire/toolwire/internal/leaderget"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/tracing"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// Route is where a tool's calls go.
type Route struct {
	Tool *tool.Tool
	Pool string
}

// Config configures a router.
type Config struct {
	Space subjects.Space
	// Tools are the tools this router knows; their calls go to Pool.
	Tools *tool.Registry
	// Pool hosts Tools (default subjects.DefaultPool).
	Pool string
	// MaxConcurrency is the per-turn default (default lease.DefaultMaxConcurrency).
	MaxConcurrency int
	// Source is the ce-source of events this router publishes.
	Source string
	// Lanes is the number of turns handled in parallel (default 16).
	Lanes int
	// Consumer sizes the shared durable consumer.
	Consumer provision.ConsumerConfig
	// LeaseTTL is the lease's idle lifetime.
	LeaseTTL time.Duration
	// Shared, when set, is the lease store this router shares with the
	// executors of its process (executor.NewShared, on the nc given to
	// New): its registrations and their claims then combine instead of
	// racing.
	Shared *executor.Shared
	// Limits bound what an input event may carry (default
	// schemas.DefaultLimits).
	Limits schemas.Limits
	// Backoff spaces the retries of an event (default stage.Backoff's).
	Backoff stage.Backoff
	// Hooks are told of every event's outcome.
	Hooks stage.Hooks
	Log   *slog.Logger
}

// withDefaults fills the zero fields of c.
func (c Config) withDefaults() Config {
	if c.Pool == "" {
		c.Pool = subjects.DefaultPool
	}
	if c.MaxConcurrency <= 0 {
		c.MaxConcurrency = lease.DefaultMaxConcurrency
	}
	if c.Source == "" {
		c.Source = "/toolwire/router"
	}
	if c.Lanes <= 0 {
		c.Lanes = stage.DefaultLanes
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	c.Limits = c.Limits.WithDefaults()
	c.Consumer = c.Consumer.WithDefaults()
	return c
}

// Validate reports the first field of c a router cannot work with.
func (c Config) Validate() error { return stage.CheckPool(c.Space, c.Tools != nil, c.Pool) }

// Router routes input events; many may run against one stream.
type Router struct {
	cfg     Config
	js      jetstream.JetStream
	store   *lease.Store
	schemas map[string]*coercion.Schema
	catalog *catalog
	cons    jetstream.Consumer
	results jetstream.Stream
	// out is read for the turns this router sees first (opener).
	out *leaderget.Stream
	// adStream is the tool advertisements' stream.
	adStream jetstream.Stream
	limits   limits
	late     atomic.Int64
	// tracing is whether the router's deliveries have spans (hops) whose
	// context its events carry.
	tracing bool
}

// New prepares a router on nc: it provisions the streams, binds the lease
// and compiles every tool's input schema once.
func New(ctx context.Context, nc *nats.Conn, cfg Config) (*Router, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	sp := cfg.Space
	bind := stage.Binding{Stream: sp.InStream(), Name: sp.RouterConsumer(), Config: cfg.Consumer, LeaseTTL: cfg.LeaseTTL}
	if cfg.Shared != nil {
		var err error
		if bind.Leases, err = cfg.Shared.Leases(nc); err != nil {
			return nil, fmt.Errorf("router: %w", err)
		}
	}
	b, err := stage.Bind(ctx, nc, sp, bind)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	js, store, cons := b.JS, b.Leases, b.Consumer
	results, err := js.Stream(ctx, sp.ResultStream())
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	// Read from the leader: the check that a turn is new decides on it.
	out := leaderget.New(js, sp, sp.OutStream())
	adStream, err := js.Stream(ctx, sp.ToolsStream())
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	r := &Router{cfg: cfg, js: js, store: store, schemas: map[string]*coercion.Schema{}, catalog: newCatalog(), cons: cons, results: hedge.Reads(results), out: out, adStream: adStream, limits: limits{cfg.Limits},
		tracing: tracing.New(cfg.Hooks.TracerProvider) != nil}
	for _, t := range cfg.Tools.Tools() {
		s, err := coercion.Compile(t.InputSchema())
		if err != nil {
			return nil, fmt.Errorf("router: tool %s: %w", t.Name(), err)
		}
		r.schemas[t.Name()] = s
	}
	return r, nil
}

// catalogWait bounds how long a starting router waits for the current
// tool advertisements before routing.
const catalogWait = 5 * time.Second

// Run consumes input events until ctx is done.
func (r *Router) Run(ctx context.Context) error {
	kv, err := r.js.KeyValue(ctx, r.cfg.Space.ToolsBucket())
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("router: tools bucket: %w", err)
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go func() {
		if err := r.catalog.watch(wctx, kv); err != nil && wctx.Err() == nil {
			r.cfg.Log.Error("router: tool advertisements", "err", err)
		}
	}()
	select {
	case <-r.catalog.ready:
	case <-time.After(catalogWait):
		r.cfg.Log.Warn("router: tool advertisements not loaded yet; routing anyway")
	case <-ctx.Done():
		return nil
	}
	return stage.Run(ctx, r.js, stage.Spec{
		Stage: subjects.StageRouter, Space: r.cfg.Space, Consumer: r.cons,
		MaxDeliver: r.cfg.Consumer.MaxDeliver, Parse: r.cfg.Space.ParseIn, Limits: r.cfg.Limits,
		Lanes: r.cfg.Lanes, Together: callsTogether, Backoff: r.cfg.Backoff, Answer: r.answer, Hooks: r.cfg.Hooks, Log: r.cfg.Log,
	}, r.handle)
}

// callsTogether lets the calls of a turn that arrive together be routed
// together: each touches only its own entry in the lease, so their
// registrations can share a compare-and-set, in any order; so can a cancel
// (a call registered before or after it is stopped all the same). An end
// stays a barrier: a call past the count it carries must find the count
// in place, or it would be registered and run. So does a discard, which
// closes the turn at the calls seen.
func callsTogether(p subjects.Parsed) bool {
	return p.Kind == subjects.KindUse || p.Kind == subjects.KindCancel
}

// handle processes one input event.
func (r *Router) handle(ctx context.Context, m *stage.Msg) error {
	p := m.Subject
	if err := checkTurn(p); err != nil {
		return stage.Fail(err)
	}
	var err error
	switch d := m.Data.(type) {
	case *schemas.ToolUse:
		err = r.use(ctx, p, m.Meta, d)
	case *schemas.TurnEnd:
		err = r.end(ctx, p, d)
	case *schemas.TurnCancel:
		err = r.cancel(ctx, p)
	case *schemas.TurnDiscard:
		err = r.discard(ctx, p)
	default:
		return stage.Drop(&schemas.FieldError{Field: "ce-type", Reason: fmt.Sprintf("%s is not an input event", m.Meta.Type)})
	}
	var late *lateError
	if errors.As(err, &late) {
		r.late.Add(1)
		return stage.Drop(late)
	}
	return err
}

// checkTurn refuses a tenant or turn name the lease cannot use as a key:
// such an event can never be routed, however often it is retried.
func checkTurn(p subjects.Parsed) error {
	if err := subjects.CheckToken("tenant", p.Tenant); err != nil {
		return err
	}
	return subjects.CheckToken("turn", p.Turn)
}

// Late counts the tool_use events that came after their turn's end and
// were answered without running.
func (r *Router) Late() int64 { return r.late.Load() }
