// Package pipeline runs every stage — routers, executors, reorder — in one
// process, each instance on its own connection, the way `toolwire serve`,
// `toolwire run` and the tests use them. Stages share nothing in memory:
// what works here works with the stages in separate processes.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/reader"
	"github.com/toolwire/toolwire/reorder"
	"github.com/toolwire/toolwire/router"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// Dialer opens a new connection for one stage instance.
type Dialer func(name string, opts ...nats.Option) (*nats.Conn, error)

// Config says how many instances of each stage to run and with what.
type Config struct {
	Space subjects.Space
	Tools *tool.Registry
	// Routers, Executors and Reorders count instances (default 1 each; 0
	// means the default, a negative count runs none of that stage).
	Routers   int
	Executors int
	Reorders  int
	// MaxConcurrency is the per-turn default limit.
	MaxConcurrency int
	// WorkDir is the working directory of calls whose turn names none.
	WorkDir   string
	Provision provision.Config
	// Limits bound what every event may carry (default schemas.DefaultLimits).
	Limits schemas.Limits
	// MaxDeliver bounds the deliveries of one message to a router or an
	// executor (default provision.DefaultMaxDeliver); on the last one the
	// call the message names is answered. The reorder keeps its own, larger
	// bound (reorder.DefaultMaxDeliver).
	MaxDeliver int
	// Backoff spaces the retries of every stage.
	Backoff stage.Backoff
	// GapDeadline is how long the reorder lets a turn wait for a call whose
	// result never comes (default reorder.DefaultGapDeadline).
	GapDeadline time.Duration
	// Executor tunes every executor (Space, Tools, WorkDir are filled in).
	Executor executor.Config
	// Hooks are told of every stage's deliveries and settled calls
	// (metrics); an Executor config with hooks of its own keeps them.
	Hooks stage.Hooks
	Log   *slog.Logger
}

// Pipeline is a running set of stages.
type Pipeline struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	conns  []*nats.Conn
	errMu  sync.Mutex
	errs   []error
	// Workers are the executor worker ids, in start order.
	Workers []string
	routers []*router.Router
	// started counts the stage instances started; stopped names those
	// that stopped since, and why (both under errMu).
	started int
	stopped []string
}

func count(n int) int {
	switch {
	case n == 0:
		return 1
	case n < 0:
		return 0
	}
	return n
}

// startWait bounds how long Start and Provision try again while JetStream
// cannot serve them: the members of a cluster may start a minute apart, a
// stream may be electing its leader, a server restarting.
const startWait = 2 * time.Minute

// Start provisions the streams and starts the stages; they run until Stop.
// A start that fails because JetStream cannot serve it for now (a cluster
// forming or electing a stream's leader after a member died, a server
// restarting: jserr.Unavailable) is made again, for at most two minutes,
// so that a process restarted into a cluster's failover waits for it
// instead of exiting.
func Start(ctx context.Context, dial Dialer, cfg Config) (p *Pipeline, err error) {
	err = jserr.Retry(ctx, startWait, time.Second, func(err error) {
		if cfg.Log != nil {
			cfg.Log.Warn("pipeline: JetStream not available yet; starting again", "err", err)
		}
	}, func() error {
		p, err = start(ctx, dial, cfg)
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

func start(ctx context.Context, dial Dialer, cfg Config) (_ *Pipeline, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	p := &Pipeline{}
	defer func() {
		// Whatever started before a failure stops again; the return
		// statements hand back nil, so the pipeline is p, not the result.
		if err != nil {
			_ = p.Stop()
		}
	}()
	conn := func(name string) (*nats.Conn, error) {
		nc, err := dial(name)
		if err != nil {
			return nil, fmt.Errorf("pipeline: connect %s: %w", name, err)
		}
		p.conns = append(p.conns, nc)
		return nc, nil
	}
	nc, err := conn("toolwire-provision")
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	if err := cfg.Space.Check(); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if err := provision.Streams(ctx, js, cfg.Space, cfg.Provision); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p.cancel = cancel
	type runner interface{ Run(context.Context) error }
	var runners []runner
	var names []string // of runners, for Alive
	// The executors of the process share one connection and one lease
	// store, and so does the first router: their writes of a turn's lease
	// combine instead of racing.
	var shared *executor.Shared
	var enc *nats.Conn
	if count(cfg.Executors) > 0 {
		if enc, err = conn("toolwire-executors"); err != nil {
			return nil, err
		}
		if shared, err = executor.NewShared(ctx, enc, cfg.Space, cfg.Provision.LeaseTTL); err != nil {
			return nil, err
		}
	}
	for i := range count(cfg.Routers) {
		var nc *nats.Conn
		var sh *executor.Shared
		if i == 0 && shared != nil {
			nc, sh = enc, shared
		} else if nc, err = conn(fmt.Sprintf("toolwire-router-%d", i)); err != nil {
			return nil, err
		}
		r, err := router.New(ctx, nc, router.Config{Shared: sh,
			Space: cfg.Space, Tools: cfg.Tools, MaxConcurrency: cfg.MaxConcurrency, LeaseTTL: cfg.Provision.LeaseTTL,
			Limits: cfg.Limits, Consumer: provision.ConsumerConfig{MaxDeliver: cfg.MaxDeliver}, Backoff: cfg.Backoff, Log: cfg.Log, Hooks: cfg.Hooks,
		})
		if err != nil {
			return nil, err
		}
		runners = append(runners, r)
		names = append(names, fmt.Sprintf("router %d", i))
		p.routers = append(p.routers, r)
	}
	for i := range count(cfg.Executors) {
		nc := enc
		ec := cfg.Executor
		ec.Shared = shared
		ec.Space, ec.Tools, ec.Log, ec.LeaseTTL, ec.Limits = cfg.Space, cfg.Tools, cfg.Log, cfg.Provision.LeaseTTL, cfg.Limits
		if ec.Consumer.MaxDeliver == 0 {
			ec.Consumer.MaxDeliver = cfg.MaxDeliver
		}
		if ec.Backoff == (stage.Backoff{}) {
			ec.Backoff = cfg.Backoff
		}
		if ec.WorkDir == "" {
			ec.WorkDir = cfg.WorkDir
		}
		if ec.Hooks.IsZero() {
			ec.Hooks = cfg.Hooks
		}
		if ec.WorkerID != "" {
			ec.WorkerID = fmt.Sprintf("%s-%d", ec.WorkerID, i)
		}
		e, err := executor.New(ctx, nc, ec)
		if err != nil {
			return nil, err
		}
		p.Workers = append(p.Workers, e.WorkerID())
		runners = append(runners, e)
		names = append(names, "executor "+e.WorkerID())
	}
	for i := range count(cfg.Reorders) {
		nc, err := conn(fmt.Sprintf("toolwire-reorder-%d", i))
		if err != nil {
			return nil, err
		}
		r, err := reorder.New(ctx, nc, reorder.Config{Space: cfg.Space, Limits: cfg.Limits, Backoff: cfg.Backoff, GapDeadline: cfg.GapDeadline, Log: cfg.Log, Hooks: cfg.Hooks})
		if err != nil {
			return nil, err
		}
		runners = append(runners, r)
		names = append(names, fmt.Sprintf("reorder %d", i))
		// Each reorder instance has a reader beside it: wherever results
		// are put in order, the clients' gap reads are answered.
		rd, err := reader.New(nc, reader.Config{Space: cfg.Space, Log: cfg.Log})
		if err != nil {
			return nil, err
		}
		runners = append(runners, rd)
		names = append(names, fmt.Sprintf("reader %d", i))
	}
	p.errMu.Lock()
	p.started = len(runners)
	p.errMu.Unlock()
	for i, r := range runners {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			err := r.Run(runCtx)
			p.stop(names[i], err)
			if err != nil {
				cfg.Log.Error("stage stopped", "err", err)
				p.errMu.Lock()
				p.errs = append(p.errs, err)
				p.errMu.Unlock()
				cancel()
			}
		}()
	}
	return p, nil
}

// Stats adds up the traffic of the stages' connections: messages out count
// the publishes and requests the stages make, a figure of round trips that
// does not depend on how busy the machine is.
func (p *Pipeline) Stats() nats.Statistics {
	var total nats.Statistics
	for _, nc := range p.conns {
		s := nc.Stats()
		total.InMsgs += s.InMsgs
		total.OutMsgs += s.OutMsgs
		total.InBytes += s.InBytes
		total.OutBytes += s.OutBytes
		total.Reconnects += s.Reconnects
	}
	return total
}

// LateCalls adds up the routers' count of calls that came after their
// turn's end (answered, never run).
func (p *Pipeline) LateCalls() int64 {
	var n int64
	for _, r := range p.routers {
		n += r.Late()
	}
	return n
}

// stop records that the stage instance name stopped, with err.
func (p *Pipeline) stop(name string, err error) {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	if err != nil {
		name += ": " + err.Error()
	}
	p.stopped = append(p.stopped, name)
}

// Alive reports nil while every stage instance the pipeline started runs
// (its executor workers take calls); else which stopped, and why. One
// that stops with an error stops the others, and the process serving
// them is then alive but does nothing: readiness must say so.
func (p *Pipeline) Alive() error {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	switch {
	case len(p.stopped) > 0:
		return fmt.Errorf("stages stopped: %s", strings.Join(p.stopped, "; "))
	case p.started == 0:
		return errors.New("no stage runs")
	}
	return nil
}

// Connected reports whether every stage connection is up.
func (p *Pipeline) Connected() bool {
	for _, nc := range p.conns {
		if !nc.IsConnected() {
			return false
		}
	}
	return true
}

// Stop stops every stage (running calls finish and publish first), drains
// the connections and returns the stages' errors, if any.
func (p *Pipeline) Stop() error {
	if p.cancel != nil {
		p.cancel()
	}
	p.wg.Wait()
	for _, nc := range p.conns {
		_ = drain(nc)
	}
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return errors.Join(p.errs...)
}

// drain drains nc and waits (bounded) until it is closed.
func drain(nc *nats.Conn) error {
	if nc.IsClosed() {
		return nil
	}
	closed := make(chan struct{})
	nc.SetClosedHandler(func(*nats.Conn) { close(closed) })
	if err := nc.Drain(); err != nil {
		nc.Close()
		return err
	}
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		nc.Close()
	}
	return nil
}

// Provision creates the pipeline's streams and buckets under space with
// their defaults, or brings them up to date; it is idempotent. A process
// that joins a pipeline with stages of its own (a remote pool's executors)
// calls it so that it can be the first to start. Start does it too. Like
// Start, it tries again while JetStream cannot serve it yet.
func Provision(ctx context.Context, nc *nats.Conn, space subjects.Space) error {
	if err := space.Check(); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	return jserr.Retry(ctx, startWait, 500*time.Millisecond, nil, func() error {
		return provision.Streams(ctx, js, space, provision.Config{})
	})
}
