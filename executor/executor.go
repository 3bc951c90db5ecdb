// Package executor runs routed calls. Workers of one pool share one durable
// pull consumer; for each call a worker classifies it (the tool's
// concurrency predicate on this call's input), records that in the turn's
// lease, and starts it only when the start rule allows (lease.CanStart),
// taking the call by compare-and-set so two workers never both start it. A
// call that must wait is parked on its own goroutine, watching the turn's
// key, while the receive loop goes on.
//
// Results are sanitized, capped and published once per call; the lease marks
// the call done only after its result is stored, so a crash in between is
// healed by redelivery and the server's duplicate detection.
package executor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/tracing"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/permission"
)

// Defaults of Config.
const (
	DefaultCallTimeout = 2 * time.Minute
	DefaultMaxTimeout  = 10 * time.Minute
	// DefaultDeadline is short so that a dead worker's calls are taken
	// over within about it: its messages come back after the same time
	// (the consumer's AckWait defaults to it) and find their claims expired.
	// 1.2 s leaves the 0.8 s the promise of "within 2 s" needs for the
	// redelivery, the takeover's write and a loaded machine (measured with
	// loadtest chaos: at 1.5 s the slowest of 80 took 2.06 s).
	DefaultDeadline = 1200 * time.Millisecond
)

// Config configures one executor worker.
type Config struct {
	Space subjects.Space
	// Pool is the pool this worker serves (default subjects.DefaultPool).
	Pool  string
	Tools *tool.Registry
	// WorkerID names this worker in results and the lease (default host-pid-nuid).
	WorkerID string
	// CallTimeout applies to tools that set none; MaxTimeout caps every call.
	CallTimeout time.Duration
	MaxTimeout  time.Duration
	// Deadline is how long a running call's claim lasts without renewal; a
	// worker renews at a third of it, and a redelivered call whose claim
	// expired counts its worker as dead. The consumer's AckWait defaults
	// to it, so that a dead worker's messages come back as its claims
	// expire.
	Deadline time.Duration
	// Shared, when set, is what this worker shares with the other workers
	// of its process (NewShared, on the nc given to New).
	Shared *Shared
	// Recheck bounds how long a parked call waits without a lease change.
	Recheck time.Duration
	// Consumer sizes the pool's shared durable consumer.
	Consumer provision.ConsumerConfig
	// TurnMaxChars caps the result characters of a turn (default DefaultTurnMaxChars).
	TurnMaxChars int
	// Policy is the permission policy (nil: every call is left to its
	// tool's own check); ApprovalTimeout bounds the wait for a decision.
	Policy          *permission.Policy
	ApprovalTimeout time.Duration
	// AdTTL is the lifetime of this worker's tool advertisements
	// (default DefaultAdTTL); NoAdvertise turns advertising off.
	AdTTL       time.Duration
	NoAdvertise bool
	// WorkDir is the working directory of turns whose context names none.
	WorkDir string
	// Source is the ce-source of results.
	Source   string
	LeaseTTL time.Duration
	// Limits bound what a dispatch or decision may carry (default
	// schemas.DefaultLimits).
	Limits schemas.Limits
	// Backoff spaces the retries of a call whose handling failed.
	Backoff stage.Backoff
	// Hooks are told of every dispatch's outcome.
	Hooks stage.Hooks
	Log   *slog.Logger
	// DrainTimeout is how long a stopping worker lets running calls finish
	// before it hands them back to the pool (default DefaultDrainTimeout).
	DrainTimeout time.Duration
}

// withDefaults fills the zero fields of c.
func (c Config) withDefaults() Config {
	if c.Pool == "" {
		c.Pool = subjects.DefaultPool
	}
	if c.WorkerID == "" {
		host, _ := os.Hostname()
		c.WorkerID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), nuid.Next()[16:])
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = DefaultMaxTimeout
	}
	if c.Deadline <= 0 {
		c.Deadline = DefaultDeadline
	}
	if c.TurnMaxChars <= 0 {
		c.TurnMaxChars = DefaultTurnMaxChars
	}
	if c.ApprovalTimeout <= 0 {
		c.ApprovalTimeout = DefaultApprovalTimeout
	}
	if c.AdTTL < time.Second {
		// Nats-TTL is at least one second.
		c.AdTTL = DefaultAdTTL
	}
	if c.Recheck <= 0 {
		c.Recheck = time.Second
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.Consumer.MaxAckPending == 0 {
		// Parked calls hold their message, so the pool needs room for
		// every call of the turns in flight, not just the running ones.
		c.Consumer.MaxAckPending = 4096
	}
	if c.Consumer.AckWait == 0 {
		// Held messages are kept alive at a third of it (InProgress).
		c.Consumer.AckWait = c.Deadline
	}
	c.Consumer = c.Consumer.WithDefaults()
	if c.Source == "" {
		c.Source = "/toolwire/executor/" + c.Pool
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports the first field of c a worker cannot work with.
func (c Config) Validate() error { return stage.CheckPool(c.Space, c.Tools != nil, c.Pool) }

// Executor is one worker of a pool.
type Executor struct {
	cfg     Config
	nc      *nats.Conn
	js      jetstream.JetStream
	store   *lease.Store
	watcher *lease.Watcher
	cons    jetstream.Consumer
	back    *comeback
	drain   *drainer
	// tracer is nil when tracing is off.
	tracer *tracing.Tracer
}

// New prepares a worker on nc.
func New(ctx context.Context, nc *nats.Conn, cfg Config) (*Executor, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	sp := cfg.Space
	b := stage.Binding{Stream: sp.ExecStream(), Name: sp.ExecConsumer(cfg.Pool), Filter: sp.ExecPool(cfg.Pool), Config: cfg.Consumer, LeaseTTL: cfg.LeaseTTL}
	if sh := cfg.Shared; sh != nil {
		if sh.nc != nc {
			return nil, fmt.Errorf("executor: %w", errSharedConn)
		}
		b.Leases = sh.store
	}
	bd, err := stage.Bind(ctx, nc, sp, b)
	if err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	e := &Executor{cfg: cfg, nc: nc, js: bd.JS, store: bd.Leases, cons: bd.Consumer, back: newComeback(nc), drain: newDrainer(), tracer: tracing.New(cfg.Hooks.TracerProvider)}
	if cfg.Shared != nil {
		e.watcher = cfg.Shared.watcher
	} else {
		e.watcher = lease.NewWatcher(e.store)
	}
	return e, nil
}

// WorkerID is the name this worker records in results.
func (e *Executor) WorkerID() string { return e.cfg.WorkerID }

// Run consumes the pool's calls until ctx is done, then waits for the calls
// it started to finish and publish.
func (e *Executor) Run(ctx context.Context) error {
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	// Once ctx ends, running calls have DrainTimeout to finish; those still
	// running then are handed back to the pool.
	defer e.drain.start(ctx, e.cfg.DrainTimeout)()
	go e.back.watch(wctx)
	if !e.cfg.NoAdvertise {
		actx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); e.advertise(actx) }()
		defer func() { stop(); <-done }()
	}
	return stage.Run(ctx, e.js, stage.Spec{
		Stage: subjects.StageExecutor, Space: e.cfg.Space, Consumer: e.cons,
		MaxDeliver: e.cfg.Consumer.MaxDeliver, Parse: e.cfg.Space.ParseExec, Limits: e.cfg.Limits,
		// Each call on its own goroutine: calls park until the start rule
		// lets them run, and a lane would hold the turn's other calls.
		Batch: 64, Backoff: e.cfg.Backoff, Answer: e.answer, Hooks: e.cfg.Hooks, Log: e.cfg.Log,
	}, e.handle)
}
