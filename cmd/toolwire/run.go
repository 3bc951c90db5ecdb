package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/localrun"
	"github.com/toolwire/toolwire/internal/toolset"
	"github.com/toolwire/toolwire/modelstream/formats"
)

func newRun() *cobra.Command {
	var (
		format, stream, workdir string
		natsURL, configFile     string
		pace, timeout           time.Duration
		testTools, progress     bool
		chunked                 bool
		executors, maxConc      int
		auth                    natsAuth
	)
	cmd := &cobra.Command{
		Use:   "run --format FORMAT --stream FILE",
		Short: "Run one model stream through a private in-process pipeline and print the results as JSON lines",
		Long: `run starts a private embedded NATS server in a temporary directory, runs every
stage in-process, feeds the stream (pausing --pace between SSE events) and prints
each result, in delivery order, as one JSON object per line, then a turn_done line.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if stream == "" {
				return fmt.Errorf("run: --stream FILE is required")
			}
			data, err := localrun.ReadStream(stream, chunked)
			if err != nil {
				return fmt.Errorf("run: %w", err)
			}
			mc, err := maxConcurrency(maxConc)
			if err != nil {
				return err
			}
			natsOpts, err := auth.options()
			if err != nil {
				return usageError("run: %w", err)
			}
			set, err := loadTools(cmd.Context(), configFile, toolset.Options{TestTools: testTools})
			if err != nil {
				return err
			}
			defer set.Close()
			err = localrun.Print(cmd.Context(), cmd.OutOrStdout(), localrun.Options{
				Format: format, Stream: data, Pace: pace, WorkDir: workdir, Tools: set.Registry,
				Executors: executors, MaxConcurrency: mc, Timeout: timeout, NATS: natsURL, NATSOptions: natsOpts, Policy: set.Policy, Limits: set.Limits,
			}, progress)
			if err != nil {
				return fmt.Errorf("run: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	auth.register(f)
	f.StringVar(&format, "format", "anthropic", "stream format: "+strings.Join(formats.Names(), ", "))
	f.BoolVar(&chunked, "chunks", false, "the stream file is a .chunks.jsonl capture: one SSE data payload per line")
	f.StringVar(&stream, "stream", "", "file holding the model's response stream")
	f.DurationVar(&pace, "pace", 0, "pause between SSE events, to replay at model speed")
	f.StringVar(&workdir, "workdir", "", "working directory of the calls (default: current)")
	f.StringVar(&natsURL, "nats", "", "send the turn to the pipeline `toolwire serve` runs on this NATS server instead of a private one")
	f.StringVar(&configFile, "config", "", "configuration file, YAML or JSON: every setting, docs/configuration.md (default $TOOLWIRE_CONFIG)")
	f.BoolVar(&testTools, "test-tools", false, "also register the test tools Noop and Sleep")
	f.IntVar(&executors, "executors", 1, "executor workers")
	f.IntVar(&maxConc, "max-concurrency", 0, "per-turn concurrency limit (default $TOOLWIRE_MAX_TOOL_USE_CONCURRENCY or 10)")
	f.BoolVar(&progress, "progress", false, `also print progress events as they happen: {"progress":true,"seq":N,"text":…}`)
	f.DurationVar(&timeout, "timeout", 10*time.Minute, "give up on the turn after this long")
	return cmd
}
