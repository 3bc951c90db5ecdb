// Command temporal measures Temporal on the workload of toolwire's
// `loadtest synth`: each turn is a workflow running its calls as parallel
// no-op activities, started and awaited by a driver, with the worker in
// the same process and a Temporal dev server started as a child process.
// It prints synth's summary and writes synth's JSON report (README.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/loadtest"
)

func main() {
	// An interrupt or a termination ends the run the same way: no new
	// turns, the server stopped and its directory removed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command: 0 done, 1 failed (or a check failed), 2 bad flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, jsonPath, quiet, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var log io.Writer = stderr
	if quiet {
		log = nil
	}
	c.SlowLog = stderr
	res, err := Run(ctx, c, log)
	if err != nil {
		fmt.Fprintln(stderr, "temporal peer:", err)
		return 1
	}
	r := res.Report
	peak := "VmHWM since the run's start"
	if !res.PeakReset {
		peak = "VmHWM since the server's start"
	}
	e := res.Config
	fmt.Fprintf(stdout, "%s; store %s; tuning %s: pollers %d workflow, %d activity, eager %v, dynamic config %v\n",
		res.Version, e.Server.Store, e.Tuning, e.Worker.WorkflowPollers, e.Worker.ActivityPollers, e.Worker.Eager,
		append(e.Worker.serverDynamicConfig(), e.Server.DynamicConfig...))
	_ = r.WriteSummary(stdout)
	fmt.Fprintf(stdout, "max RSS is the Temporal server's (%s); this process (driver, client, worker) %.0f MiB\n",
		peak, res.DriverRSSMiB)
	if r.Calls > 0 && r.DurationS > 0 {
		fmt.Fprintf(stdout, "CPU           server %.1f s (%.2f cores, %.2f ms a call)  this process %.1f s (%.2f cores)\n",
			res.ServerCPU.Seconds(), res.ServerCPU.Seconds()/r.DurationS, 1000*res.ServerCPU.Seconds()/float64(r.Calls),
			res.DriverCPU.Seconds(), res.DriverCPU.Seconds()/r.DurationS)
	}
	if jsonPath != "" {
		if err := loadtest.WriteJSONFile(jsonPath, r); err != nil {
			fmt.Fprintln(stderr, "temporal peer:", err)
			return 1
		}
	}
	if r.Failed() {
		return 1
	}
	return 0
}

// parseFlags reads the command line into a Config: synth's workload flags
// with synth's names, and the Temporal set-up's.
func parseFlags(args []string, stderr io.Writer) (c Config, jsonPath string, quiet bool, err error) {
	fs := flag.NewFlagSet("temporal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.Concurrency, "concurrency", 0, "closed loop: `N` turns in flight (default 1 when --rate is not given)")
	fs.Float64Var(&c.Rate, "rate", 0, "open loop: `R` calls per second, as turns started at even intervals")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "how long new turns are started")
	calls := fs.String("calls-per-turn", "1", "calls in each turn, `N or MIN-MAX`")
	fs.Float64Var(&c.SafeShare, "safe-share", 1, "share of concurrency-safe calls, 0..1 (synth's default is 0.5)")
	fs.IntVar(&c.MaxConcurrency, "max-concurrency", loadtest.DefaultMaxConcurrency, "per-turn limit on calls running at once")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the turns, as synth's")
	fs.StringVar(&c.Server.CLI, "temporal", "", "the temporal CLI `binary` (default: "+CLIVersion+" in the user cache, installed with go install if missing)")
	fs.BoolVar(&c.Server.NoInstall, "no-install", false, "fail rather than go install a missing CLI")
	fs.StringVar(&c.Server.Store, "store", StoreMemory, "where the dev server keeps its state: memory or file (SQLite in a temporary directory)")
	fs.Func("dynamic-config", "a server dynamic config `KEY=VALUE` (VALUE in JSON), repeatable", func(s string) error {
		c.Server.DynamicConfig = append(c.Server.DynamicConfig, s)
		return nil
	})
	fs.IntVar(&c.Worker.WorkflowPollers, "workflow-pollers", 0, "the worker's workflow task pollers (0: the SDK's default, 2)")
	fs.IntVar(&c.Worker.ActivityPollers, "activity-pollers", 0, "the worker's activity task pollers (0: the SDK's default, 2)")
	fs.BoolVar(&c.Worker.Eager, "eager", false, "eager workflow start and eager activities")
	fs.StringVar(&c.Tuning, "tuning", TuningTuned, "tuned (limits a one-node dev server hits lifted, more pollers; README.md) or stock (the dev server's and the SDK's defaults)")
	fs.DurationVar(&c.SlowTurn, "slow", 0, "describe on stderr each turn slower than `D`: where its time went")
	fs.StringVar(&jsonPath, "json", "", "also write the report as JSON to `FILE`")
	fs.BoolVar(&quiet, "quiet", false, "no progress lines")
	if err = fs.Parse(args); err != nil {
		return c, "", false, err
	}
	if fs.NArg() > 0 {
		return c, "", false, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if c.CallsPerTurn, err = loadtest.ParseRange(*calls); err != nil {
		return c, "", false, fmt.Errorf("--calls-per-turn: %w", err)
	}
	if c.CallsPerTurn.Min < 1 {
		// Config reads a zero range as its default; a flag of 0 is wrong.
		return c, "", false, fmt.Errorf("--calls-per-turn: want N ≥ 1, got %s", *calls)
	}
	if _, err = c.withDefaults(); err != nil {
		return c, "", false, err
	}
	return c, jsonPath, quiet, nil
}
