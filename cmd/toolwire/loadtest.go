package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/loadtest"
)

func newLoadtest() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "loadtest",
		Short: "Drive workloads through a pipeline and report throughput, latency and delivery checks",
	}
	cmd.AddCommand(newLoadtestSynth())
	cmd.AddCommand(newLoadtestRecord(), newLoadtestReplay(), newLoadtestChaos())
	return cmd
}

func newLoadtestSynth() *cobra.Command {
	var (
		c            loadtest.Config
		callsPerTurn string
		jsonFile     string
		quiet        bool
		compare      bool
		auth         natsAuth
	)
	cmd := &cobra.Command{
		Use:   "synth",
		Short: "Run a synthetic workload (closed loop: --concurrency, open loop: --rate) and print a summary",
		Long: `synth starts turns of Noop/Sleep calls for --duration, on an embedded server with a
pipeline in the process (or on the pipeline served at --nats), measures each call from
its publish to its result, checks that every call was answered once, in order, under
the start rule, and prints a summary; --json FILE also writes the report, --plot DIR
PNG charts of it (docs/loadtest.md). --mode wait-for-end holds each turn's calls until
its stream ended, as an executor that waits for the end of the stream does; --compare
runs both modes on the same turns and reports the ratio. It exits 1 when a check failed.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := loadtest.ParseRange(callsPerTurn)
			if err != nil {
				return usageError("loadtest synth: --calls-per-turn %w", err)
			}
			if c.NATSOptions, err = auth.options(); err != nil {
				return usageError("loadtest synth: %w", err)
			}
			c.CallsPerTurn = r
			if !quiet && isTerminal(os.Stderr) {
				c.Progress = os.Stderr
			}
			if compare {
				return runCompare(cmd, c, jsonFile)
			}
			rep, err := loadtest.Run(cmd.Context(), c)
			var ce *loadtest.ConfigError
			if errors.As(err, &ce) {
				return usageError("loadtest synth: %w", err)
			}
			if err != nil {
				return fmt.Errorf("loadtest synth: %w", err)
			}
			if jsonFile != "" {
				if err := loadtest.WriteJSONFile(jsonFile, rep); err != nil {
					return fmt.Errorf("loadtest synth: %w", err)
				}
			}
			if err := rep.WriteSummary(cmd.OutOrStdout()); err != nil {
				return err
			}
			if rep.Failed() {
				return fmt.Errorf("loadtest synth: checks failed: %d lost, %d duplicates, %d order violations, %d concurrency violations",
					rep.Lost, rep.Duplicates, rep.OrderViolations, rep.ConcurrencyViolations)
			}
			return nil
		},
	}
	toolsUsage(cmd)
	cmd.Args = cobra.NoArgs
	f := cmd.Flags()
	f.IntVar(&c.Concurrency, "concurrency", 0, "closed loop: turns in flight (default 1 when --rate is not given)")
	f.Float64Var(&c.Rate, "rate", 0, "open loop: calls per second, whatever the pipeline's pace")
	f.IntVar(&c.MaxInFlight, "max-in-flight", 0, fmt.Sprintf("open loop: at most this many turns in flight; a turn due beyond it waits, and the summary says how many did (default %d)", loadtest.DefaultMaxInFlight))
	f.DurationVar(&c.Duration, "duration", 10*time.Second, "how long new turns are started")
	f.StringVar(&callsPerTurn, "calls-per-turn", "1", "calls in each turn: N, or MIN-MAX drawn uniformly")
	f.Float64Var(&c.SafeShare, "safe-share", 0.5, "share of concurrency-safe calls, 0..1")
	f.DurationVar(&c.ServiceTime, "service-time", 0, "how long a call runs (0: Noop; more: Sleep, in whole milliseconds)")
	f.DurationVar(&c.StreamTime, "stream-time", 0, "spread a turn's calls over this time, as a streaming model publishes them (0: all at once)")
	f.StringVar(&c.Mode, "mode", loadtest.ModeStreaming, "streaming: each call published as its block completes; wait-for-end: a turn's calls held until its stream ended")
	f.BoolVar(&compare, "compare", false, "run the workload in both modes, one after the other, and report the streaming / wait-for-end turn ratio")
	f.IntVar(&c.MaxConcurrency, "max-concurrency", 0, fmt.Sprintf("per-turn concurrency limit (default %d)", loadtest.DefaultMaxConcurrency))
	f.StringVar(&c.NATS, "nats", "", "drive the pipeline `toolwire serve --test-tools` runs on this NATS server instead of a private one")
	auth.register(f)
	f.StringVar(&jsonFile, "json", "", "also write the report as JSON to this file")
	f.StringVar(&c.Plot, "plot", "", "also write PNG charts (latency histogram, latency and throughput over time; with --compare both modes side by side) into this directory")
	f.BoolVar(&c.Baseline, "baseline", false, "also measure a bare JetStream hop and the same workload run by an in-process executor")
	f.BoolVar(&quiet, "quiet", false, "no progress bar")
	return cmd
}

// isTerminal says whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
