package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/loadtest"
)

func newLoadtestRecord() *cobra.Command {
	var (
		c    loadtest.RecordConfig
		out  string
		auth natsAuth
	)
	cmd := &cobra.Command{
		Use:   "record --nats URL --out FILE",
		Short: "Capture a live system's input events (tool_use, turn_end, cancel, discard) with their timing into an event log",
		Long: `record subscribes to the input subjects of every tenant (or of --tenant) on the
system at --nats and writes each event of the turns that ended while it listened to
--out, one CloudEvent a line with its offset in ms (docs/loadtest.md). It stops after
--turns ended turns or after --duration, whichever comes first (or on interrupt).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if c.NATS == "" {
				return usageError("loadtest record: --nats: the URL of the live system is required")
			}
			var err error
			if c.NATSOptions, err = auth.options(); err != nil {
				return usageError("loadtest record: %w", err)
			}
			if out == "" {
				return usageError("loadtest record: --out: the event log file is required")
			}
			if c.Turns < 0 {
				return usageError("loadtest record: --turns: must not be negative, got %d", c.Turns)
			}
			if c.Duration < 0 {
				return usageError("loadtest record: --duration: must not be negative, got %s", c.Duration)
			}
			f, err := os.Create(out)
			if err != nil {
				return fmt.Errorf("loadtest record: %w", err)
			}
			st, err := loadtest.Record(cmd.Context(), c, f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			var ce *loadtest.ConfigError
			if errors.As(err, &ce) {
				return usageError("loadtest record: %w", err)
			}
			if err != nil {
				return fmt.Errorf("loadtest record: %w", err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "recorded %d events of %d turns to %s (%d events of unfinished turns left out, %d undecodable)\n",
				st.Events, st.Turns, out, st.Skipped, st.Bad)
			return err
		},
	}
	toolsUsage(cmd)
	cmd.Args = cobra.NoArgs
	f := cmd.Flags()
	f.StringVar(&c.NATS, "nats", "", "the NATS server of the live system (required)")
	auth.register(f)
	f.StringVar(&out, "out", "", "the event log to write (required)")
	f.IntVar(&c.Turns, "turns", 0, "stop once this many distinct turns have ended (0: no limit)")
	f.DurationVar(&c.Duration, "duration", 0, "stop after this long (0: no limit)")
	f.StringVar(&c.Tenant, "tenant", "", "record this tenant only (default: every tenant)")
	return cmd
}

func newLoadtestReplay() *cobra.Command {
	var (
		c        loadtest.ReplayConfig
		jsonFile string
		quiet    bool
		auth     natsAuth
	)
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Publish an event log with its timing (--speed) or back to back (--max), with fresh turn ids, and report as synth does",
		Long: `replay reads an event log written by record and publishes its events with their
recorded offsets scaled by 1/--speed (or as fast as possible with --max), --loop times,
each recorded turn under a fresh turn id per loop, on an embedded server with a
pipeline in the process (or on the pipeline served at --nats). It measures each call
and turn, checks the deliveries and prints a summary with the call mix; --json FILE
also writes the report, --plot DIR PNG charts of it (docs/loadtest.md). It exits 1
when a check failed.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("speed") && c.Speed <= 0 {
				return usageError("loadtest replay: --speed: must be positive, got %g", c.Speed)
			}
			var err error
			if c.NATSOptions, err = auth.options(); err != nil {
				return usageError("loadtest replay: %w", err)
			}
			if cmd.Flags().Changed("speed") && c.Max {
				return usageError("loadtest replay: --max: give either --speed or --max, not both")
			}
			if c.Max {
				c.Speed = 0
			}
			if c.Loop < 1 {
				return usageError("loadtest replay: --loop: must be at least 1, got %d", c.Loop)
			}
			f, err := os.Open(args[0])
			if err != nil {
				return fmt.Errorf("loadtest replay: %w", err)
			}
			log, err := loadtest.ReadLog(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("loadtest replay: %s: %w", args[0], err)
			}
			if !quiet && isTerminal(os.Stderr) {
				c.Progress = os.Stderr
			}
			rep, err := loadtest.Replay(cmd.Context(), c, log)
			var ce *loadtest.ConfigError
			if errors.As(err, &ce) {
				return usageError("loadtest replay: %w", err)
			}
			if err != nil {
				return fmt.Errorf("loadtest replay: %w", err)
			}
			if jsonFile != "" {
				if err := loadtest.WriteJSONFile(jsonFile, rep.Report); err != nil {
					return fmt.Errorf("loadtest replay: %w", err)
				}
			}
			if err := rep.WriteSummary(cmd.OutOrStdout()); err != nil {
				return err
			}
			if rep.Failed() {
				return fmt.Errorf("loadtest replay: checks failed: %d lost, %d duplicates, %d order violations, %d concurrency violations",
					rep.Lost, rep.Duplicates, rep.OrderViolations, rep.ConcurrencyViolations)
			}
			return nil
		},
	}
	toolsUsage(cmd)
	cmd.Args = exactArgs(1, "the event log FILE")
	f := cmd.Flags()
	f.Float64Var(&c.Speed, "speed", 1, "scale the recorded timing: 2 publishes twice as fast")
	f.BoolVar(&c.Max, "max", false, "publish the events back to back, as fast as possible")
	f.IntVar(&c.Loop, "loop", 1, "replay the log this many times, with fresh turn ids each time")
	f.StringVar(&c.NATS, "nats", "", "drive the pipeline `toolwire serve --test-tools` runs on this NATS server instead of a private one")
	auth.register(f)
	f.StringVar(&jsonFile, "json", "", "also write the report as JSON to this file")
	f.StringVar(&c.Plot, "plot", "", "also write PNG charts (latency histogram, latency and throughput over time) into this directory")
	f.BoolVar(&quiet, "quiet", false, "no progress bar")
	return cmd
}
