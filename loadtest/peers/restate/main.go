// Command restate measures Restate on the workload of toolwire's
// `loadtest synth` (no-op tools, closed or open loop) and reports it in the
// same JSON shape, so that the two can be put side by side. It starts a
// restate-server of its own, serves the tools' deployment in this process,
// registers it, drives the ingress, and stops the server (README.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/toolwire/toolwire/loadtest"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the command: 0 when the run passed its checks, 1 when it failed
// them or could not run, 2 for a bad flag.
func run(args []string, stdout, stderr io.Writer) int {
	var c Config
	var jsonPath string
	fs := flag.NewFlagSet("restate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Mode, "mode", ModeSideEffects, "side-effects (one invocation per turn, its calls parallel journaled side effects) or invocations (one invocation per call)")
	fs.BoolVar(&c.CallRun, "call-run", false, "invocations mode: run each tool as a journaled side effect (restate.Run) inside its invocation")
	fs.IntVar(&c.Concurrency, "concurrency", 0, "closed loop: turns in flight (default 1 without --rate)")
	fs.Float64Var(&c.Rate, "rate", 0, "open loop: calls per second, as turns at even intervals")
	fs.IntVar(&c.CallsPerTurn, "calls-per-turn", 1, "calls in each turn")
	fs.DurationVar(&c.Duration, "duration", defaultDuration, "how long new turns are started")
	fs.DurationVar(&c.Drain, "drain", 0, "how long turns in flight may take after --duration (default 30s)")
	fs.StringVar(&jsonPath, "json", "", "also write the report as JSON to this file")
	fs.StringVar(&c.ServerBin, "restate-bin", "", "restate-server binary to run (default: installed with npm)")
	fs.StringVar(&c.ServerVersion, "restate-version", DefaultServerVersion, "restate-server version to install with npm")
	fs.StringVar(&c.CacheDir, "cache-dir", defaultCacheDir(), "where npm installs restate-server")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %q\n", fs.Args())
		return 2
	}
	c.Log = stderr

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := Run(ctx, c)
	var ce *loadtest.ConfigError
	if errors.As(err, &ce) {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if res == nil || res.Report == nil {
		fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	rep := res.Report
	mode := c.Mode
	if c.CallRun {
		mode += " (tool in restate.Run)"
	}
	fmt.Fprintf(stdout, "Restate %s, sdk-go %s, mode %s\n", res.ServerVersion, res.SDKVersion, mode)
	_ = rep.WriteSummary(stdout)
	fmt.Fprintf(stdout, "max RSS is restate-server's; this process (load generator and service deployment) %.0f MiB\n", res.ClientRSSMiB)
	if jsonPath != "" {
		if werr := loadtest.WriteJSONFile(jsonPath, rep); werr != nil {
			fmt.Fprintln(stderr, "error:", werr)
			return 1
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	if rep.Failed() || rep.Errors > 0 {
		return 1
	}
	return 0
}

// defaultDuration is toolwire's synth default.
const defaultDuration = 10 * time.Second
