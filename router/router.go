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
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/stage"
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
	// Limits bound what an input event may carry (default
	// schemas.DefaultLimits).
	Limits schemas.Limits
	Log    *slog.Logger
}

// Router routes input events; many may run against one stream.
type Router struct {
	cfg     Config
	js      jetstream.JetStream
	store   *lease.Store
	schemas map[string]*coercion.Schema
	catalog *catalog
	cons    jetstream.Consumer
	results jetstream.Stream
	limits  limits
	late    atomic.Int64
}

// New prepares a router on nc: it provisions the streams, binds the lease
// and compiles every tool's input schema once.
func New(ctx context.Context, nc *nats.Conn, cfg Config) (*Router, error) {
	if cfg.Tools == nil {
		return nil, errors.New("router: no tools")
	}
	if cfg.Pool == "" {
		cfg.Pool = subjects.DefaultPool
	}
	if cfg.MaxConcurrency <= 0 {
		cfg.MaxConcurrency = lease.DefaultMaxConcurrency
	}
	if cfg.Source == "" {
		cfg.Source = "/toolwire/router"
	}
	if cfg.Lanes <= 0 {
		cfg.Lanes = 16
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Limits = cfg.Limits.WithDefaults()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	store, err := lease.NewStore(ctx, js, cfg.Space, cfg.LeaseTTL)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	// The consumer exists when New returns, so a started pipeline can be
	// inspected and fed at once.
	cons, err := provision.Consumer(ctx, js, cfg.Space.InStream(), cfg.Space.RouterConsumer(), cfg.Space.InAll(), cfg.Consumer)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	results, err := js.Stream(ctx, cfg.Space.ResultStream())
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	r := &Router{cfg: cfg, js: js, store: store, schemas: map[string]*coercion.Schema{}, catalog: newCatalog(), cons: cons, results: results, limits: limits{cfg.Limits}}
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
	// Lanes keep working on what they were given after ctx ends, so that a
	// drain finishes the messages it has rather than dropping them.
	lanes := stage.NewLanes(context.WithoutCancel(ctx), r.cfg.Lanes, 64, r.handle)
	defer lanes.Close()
	return stage.Consume(ctx, r.cons, 256, r.cfg.Log, func(m jetstream.Msg) {
		p, err := r.cfg.Space.ParseIn(m.Subject())
		if err != nil {
			lanes.Submit("", m)
			return
		}
		lanes.Submit(p.Tenant+"."+p.Turn, m)
	})
}

// handle processes one input event and acks, naks or dead-letters it.
func (r *Router) handle(ctx context.Context, m jetstream.Msg) {
	p, err := r.cfg.Space.ParseIn(m.Subject())
	if err != nil {
		stage.DeadLetter(ctx, r.js, r.cfg.Space, "", subjects.StageRouter, m, err, r.cfg.Log)
		return
	}
	meta, data, err := r.cfg.Limits.Decode(m.Headers(), m.Data())
	if err != nil {
		if err := r.poison(ctx, p, m, meta, data, err); err != nil {
			r.cfg.Log.Warn("router: retrying an unusable event", "subject", m.Subject(), "err", err)
			_ = m.NakWithDelay(retryDelay(m))
		}
		return
	}
	switch d := data.(type) {
	case *schemas.ToolUse:
		err = r.use(ctx, p, meta, d)
	case *schemas.TurnEnd:
		err = r.end(ctx, p, d)
	case *schemas.TurnCancel:
		err = r.cancel(ctx, p)
	case *schemas.TurnDiscard:
		err = r.discard(ctx, p)
	default:
		err = &schemas.FieldError{Field: "ce-type", Reason: fmt.Sprintf("%s is not an input event", meta.Type)}
		stage.DeadLetter(ctx, r.js, r.cfg.Space, p.Tenant, subjects.StageRouter, m, err, r.cfg.Log)
		return
	}
	var late *lateError
	switch {
	case errors.As(err, &late):
		r.late.Add(1)
		stage.DeadLetter(ctx, r.js, r.cfg.Space, p.Tenant, subjects.StageRouter, m, late, r.cfg.Log)
		return
	case err != nil:
		r.cfg.Log.Warn("router: retrying", "subject", m.Subject(), "err", err)
		_ = m.NakWithDelay(retryDelay(m))
		return
	}
	_ = m.Ack()
}

// Late counts the tool_use events that came after their turn's end and
// were answered without running.
func (r *Router) Late() int64 { return r.late.Load() }

// poison handles an event that cannot be used: undecodable, or with a
// field over a limit. It first answers what the event still names — the
// call, when its seq is under the limit (from the data or the ce-seq
// header), gets an error result in its place; an unusable turn_end closes
// its turn at the calls seen — then dead-letters it. An answer that fails
// is an error: the message is retried, and both steps may repeat.
func (r *Router) poison(ctx context.Context, p subjects.Parsed, m jetstream.Msg, meta schemas.Meta, data schemas.Data, cause error) error {
	var late *lateError
	switch err := r.answerPoison(ctx, p, meta, data, cause); {
	case errors.As(err, &late):
		r.late.Add(1)
	case err != nil:
		return err
	}
	stage.DeadLetter(ctx, r.js, r.cfg.Space, p.Tenant, subjects.StageRouter, m, cause, r.cfg.Log)
	return nil
}

func (r *Router) answerPoison(ctx context.Context, p subjects.Parsed, meta schemas.Meta, data schemas.Data, cause error) error {
	if subjects.CheckToken("tenant", p.Tenant) != nil || subjects.CheckToken("turn", p.Turn) != nil {
		return nil
	}
	switch p.Kind {
	case subjects.KindEnd:
		return r.closeAt(ctx, p, "turn_end not usable, the turn is closed at the calls seen: "+cause.Error())
	case subjects.KindUse:
	default:
		return nil
	}
	use := r.limits.identify(meta, data)
	if use == nil {
		return nil
	}
	// A corrupt copy of a call that is already routed (a good copy came
	// first) must not replace it.
	l, _, err := r.store.Get(ctx, p.Tenant, p.Turn)
	switch {
	case err == nil:
		if c := l.Peek(use.Seq); c != nil && c.State != schemas.CallUnknown {
			return nil
		}
	case !errors.Is(err, jetstream.ErrKeyNotFound):
		return err
	}
	why := "Tool call not executed: malformed tool_use event: " + cause.Error()
	var fe *schemas.FieldError
	if errors.As(cause, &fe) && fe.Limit != "" {
		why = "Tool call not executed: the tool_use event is over a limit: " + cause.Error()
	}
	return r.reject(ctx, p, use, rejection{why: why})
}

func retryDelay(m jetstream.Msg) time.Duration {
	n := uint64(1)
	if md, err := m.Metadata(); err == nil {
		n = md.NumDelivered
	}
	return min(time.Duration(n)*100*time.Millisecond, 5*time.Second)
}
