package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/toolwire/toolwire/loadtest"
)

// Config is a workload, toolwire's synth one with no-op tools, and the
// server it runs on.
type Config struct {
	// Mode is ModeSideEffects (default) or ModeInvocations.
	Mode string
	// Concurrency is the closed loop: this many turns in flight, each
	// followed by the next as soon as it ended.
	Concurrency int
	// CallRun, in invocations mode, runs each call's tool as a journaled
	// side effect inside its invocation (restate.Run), as side-effects mode
	// does, instead of in the handler directly.
	CallRun bool
	// Rate is the open loop: calls per second, as turns started at even
	// intervals. Exactly one of Concurrency and Rate is set.
	Rate float64
	// CallsPerTurn is the number of calls of each turn.
	CallsPerTurn int
	// Duration is how long new turns are started; turns in flight then
	// finish, or have their calls counted lost after Drain.
	Duration time.Duration
	// Drain is how long turns in flight may take after Duration.
	Drain time.Duration
	// ServerBin is restate-server's binary; empty installs ServerVersion
	// with npm under CacheDir.
	ServerBin     string
	ServerVersion string
	CacheDir      string
	// Log gets a line for each step before the run (stderr in the command).
	Log io.Writer
}

// Result is a run's report and what it ran on.
type Result struct {
	Report *loadtest.Report
	// ServerVersion and SDKVersion are restate-server's and the Go SDK's.
	ServerVersion, SDKVersion string
	// ClientRSSMiB is this process's peak: the load generator and the
	// service deployment, which the report's RSS does not cover.
	ClientRSSMiB float64
}

// check validates c and fills in defaults, naming a bad field as its flag.
func (c Config) check() (Config, error) {
	bad := func(f, format string, a ...any) (Config, error) {
		return c, &loadtest.ConfigError{Field: f, Msg: fmt.Sprintf(format, a...)}
	}
	switch c.Mode {
	case "":
		c.Mode = ModeSideEffects
	case ModeSideEffects, ModeInvocations:
	default:
		return bad("mode", "want %s or %s, got %q", ModeSideEffects, ModeInvocations, c.Mode)
	}
	s := c.schedule()
	if err := s.Check(); err != nil {
		return c, err
	}
	c.Concurrency = s.Concurrency
	if c.CallRun && c.Mode != ModeInvocations {
		return bad("call-run", "is for --mode %s, where each call is an invocation", ModeInvocations)
	}
	if c.CallsPerTurn < 1 {
		return bad("calls-per-turn", "must be at least 1, got %d", c.CallsPerTurn)
	}
	if c.Drain <= 0 {
		c.Drain = 30 * time.Second
	}
	if c.ServerVersion == "" {
		c.ServerVersion = DefaultServerVersion
	}
	if c.CacheDir == "" {
		c.CacheDir = defaultCacheDir()
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	return c, nil
}

// schedule is how the driver starts turns: synth's loops.
func (c Config) schedule() loadtest.Schedule {
	return loadtest.Schedule{Concurrency: c.Concurrency, Rate: c.Rate, MeanCalls: float64(c.CallsPerTurn), Duration: c.Duration}
}

// inflight is how many requests can be in flight at once: the ingress
// client's connection pool is sized to it.
func (c Config) inflight() int {
	n := c.Concurrency
	if c.Rate > 0 {
		n = 256
	}
	if c.Mode == ModeInvocations {
		n *= c.CallsPerTurn
	}
	return n
}

// Run starts a restate-server, registers the service deployment served in
// this process with it, runs the workload over its ingress, and stops it.
func Run(ctx context.Context, c Config) (*Result, error) {
	c, err := c.check()
	if err != nil {
		return nil, err
	}
	bin := c.ServerBin
	if bin == "" {
		if bin, err = InstallServer(ctx, c.CacheDir, c.ServerVersion, c.Log); err != nil {
			return nil, err
		}
	}
	res := &Result{SDKVersion: sdkVersion()}
	if res.ServerVersion, err = ServerVersion(ctx, bin); err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	dep, err := ServeDeployment()
	if err != nil {
		return nil, err
	}
	defer dep.Close(context.WithoutCancel(ctx))
	srv, err := StartServer(ctx, bin)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	fmt.Fprintf(c.Log, "restate-server %s (pid %d): ingress %s, admin %s; service deployment %s\n",
		res.ServerVersion, srv.PID(), srv.Ingress, srv.Admin, dep.URI)
	if err := srv.Register(ctx, dep.URI); err != nil {
		return nil, err
	}
	cl := newClient(srv.Ingress, c.Mode, c.CallRun, c.inflight())
	if err := ready(ctx, cl); err != nil {
		return nil, fmt.Errorf("%w\nrestate-server's log ends:\n%s", err, srv.LogTail(30))
	}
	fmt.Fprintf(c.Log, "running %s for %s\n", c.Mode, c.Duration)

	loadtest.ResetPeakRSS(srv.PID())
	loadtest.ResetPeakRSS(os.Getpid())
	t := newTally()
	start := time.Now()
	rctx, cancel := context.WithDeadline(ctx, start.Add(c.Duration+c.Drain))
	defer cancel()
	// The same closed or open loop as synth's.
	loadtest.Loop(rctx, c.schedule(), start, func(uint64) { t.add(cl.runTurn(rctx, c.CallsPerTurn)) })
	res.Report = t.report(start)
	res.Report.RSSMiBMax = loadtest.PeakRSSMiB(srv.PID())
	res.ClientRSSMiB = loadtest.PeakRSSMiB(os.Getpid())
	return res, ctx.Err()
}

// ready waits until a one-call turn is answered: a deployment just
// registered may take a moment to reach the ingress. It is not measured,
// and it is the only turn before the run (toolwire's synth has no warm-up
// either).
func ready(ctx context.Context, c *client) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		o := c.runTurn(ctx, 1)
		if o.err == nil && len(o.deliveries) == 1 {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(errors.New("the service was not reachable through the ingress in 30 s"), o.err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// sdkVersion is the Go SDK's version as built into this binary.
func sdkVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/restatedev/sdk-go" {
				return d.Version
			}
		}
	}
	return "unknown"
}
