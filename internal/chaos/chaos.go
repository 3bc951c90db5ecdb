// Package chaos runs toolwire as ops teams run it — a three-node JetStream
// cluster of `toolwire serve` processes, the stages in processes of their
// own — under a steady mixed load while it kills processes with SIGKILL
// and restarts them, injects malformed events, and then checks from
// outside that nothing was lost, duplicated, reordered or run twice
// (docs/loadtest.md, Chaos).
package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/subjects"
)

// Config is a chaos run.
type Config struct {
	// Binary is the toolwire executable the processes run.
	Binary string
	// Dir holds the nodes' stores, the logs and the side-effect ledger
	// (default: a new temporary directory, removed afterwards unless the
	// run failed).
	Dir string
	// Duration is how long turns are started (default 60 s).
	Duration time.Duration
	// KillEvery is the pause between two executor kills (default 5 s).
	KillEvery time.Duration
	// NodeDown is how long the killed NATS node stays away before it is
	// started again (default 3 s).
	NodeDown time.Duration
	// Concurrency is the turns in flight (default 12).
	Concurrency int
	// Rate, when set, replaces the closed loop by an open one: this many
	// turns are started a second whatever the pipeline's pace, at most
	// MaxInFlight (default 1,000) unfinished at once — the way to hold
	// the cluster under overload.
	Rate        float64
	MaxInFlight int
	// Malformed is the number of hostile events injected during the load
	// (default 10,000; negative: none).
	Malformed int
	// Executors and Reorders count the processes of those stages
	// (default 3 and 2).
	Executors, Reorders int
	// MaxRecovery and MaxNodeRecovery are the bounds the run is held to
	// (default DefaultMaxRecovery and DefaultMaxNodeRecovery); a test on
	// a shared machine passes looser ones.
	MaxRecovery, MaxNodeRecovery time.Duration
	// Progress, when set, gets a line per kill and per phase.
	Progress io.Writer
}

func (c Config) withDefaults() Config {
	if c.Duration == 0 {
		c.Duration = 60 * time.Second
	}
	if c.KillEvery == 0 {
		c.KillEvery = 5 * time.Second
	}
	if c.NodeDown == 0 {
		c.NodeDown = 3 * time.Second
	}
	if c.Concurrency == 0 {
		c.Concurrency = 12
	}
	if c.Malformed == 0 {
		c.Malformed = 10_000
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = 1000
	}
	if c.Executors == 0 {
		c.Executors = 3
	}
	if c.Reorders == 0 {
		c.Reorders = 2
	}
	if c.MaxRecovery == 0 {
		c.MaxRecovery = DefaultMaxRecovery
	}
	if c.MaxNodeRecovery == 0 {
		c.MaxNodeRecovery = DefaultMaxNodeRecovery
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c
}

// drain is how long turns in flight at the end may take to complete.
const drain = 30 * time.Second

// Run runs the chaos test and reports what it found; an error means the
// run itself could not be made (a process that never started, a cluster
// that never formed), not that a check failed: see Report.Failed.
func Run(ctx context.Context, cfg Config) (_ *Report, err error) {
	cfg = cfg.withDefaults()
	if cfg.Binary == "" {
		return nil, errors.New("chaos: no toolwire binary to run")
	}
	dir := cfg.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "toolwire-chaos-"); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "work"), 0o755); err != nil {
		return nil, err
	}
	top, err := newTopology(cfg.Binary, dir, cfg.Executors, cfg.Reorders)
	if err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, dir: dir, top: top, obs: newObserver(), sp: subjects.Default()}
	var rep *Report
	defer func() {
		// The processes stop before their directory goes: a temporary
		// one is removed only after a run that passed.
		top.stop()
		if cfg.Dir == "" && rep != nil && rep.Dir == "" {
			_ = os.RemoveAll(dir)
		}
	}()
	if err := r.startAll(ctx); err != nil {
		return nil, err
	}
	if rep, err = r.load(ctx); err != nil {
		return nil, err
	}
	if cfg.Dir != "" || rep.Failed() {
		rep.Dir = dir
	}
	return rep, nil
}

// run is one chaos run in progress.
type run struct {
	cfg Config
	dir string
	top *topology
	obs *observer
	sp  subjects.Space
	nc  *nats.Conn
	js  jetstream.JetStream
	cl  *client.Client

	mu        sync.Mutex
	kills     []kill
	nodeKills []nodeKill
	finished  []string
}

// kill is an executor's death: the calls it left behind, to be picked up.
type kill struct {
	pid   int
	at    time.Time
	calls []callKey
}

// nodeKill is a NATS node's death: the turns in flight then, to make
// progress again.
type nodeKill struct {
	at    time.Time
	turns []string
}

func (r *run) logf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Progress, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
}
