package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
)

func newServe() *cobra.Command {
	var (
		listen, store, workdir string
		testTools              bool
		executors, reorders    int
		maxConc                int
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run an embedded NATS server and every stage until SIGINT/SIGTERM",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := slog.New(slog.NewTextHandler(os.Stderr, nil))
			reg, err := registry(testTools)
			if err != nil {
				return err
			}
			mc, err := maxConcurrency(maxConc)
			if err != nil {
				return err
			}
			srv, err := embedded.Start(embedded.Options{StoreDir: store, Listen: listen})
			if err != nil {
				return err
			}
			defer srv.Shutdown()
			p, err := pipeline.Start(cmd.Context(), srv.Connect, pipeline.Config{
				Space: subjects.Default(), Tools: reg, Executors: executors, Reorders: reorders,
				MaxConcurrency: mc, WorkDir: workdir, Log: log,
			})
			if err != nil {
				return err
			}
			log.Info("toolwire serving", "nats", srv.ClientURL(), "store", store, "executors", len(p.Workers))
			<-cmd.Context().Done()
			log.Info("draining")
			if err := p.Stop(); err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			log.Info("stopped")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:4222", "NATS client address")
	f.StringVar(&store, "store", "./toolwire-data", "JetStream storage directory")
	f.StringVar(&workdir, "workdir", "", "working directory of calls whose turn names none (default: current)")
	f.BoolVar(&testTools, "test-tools", false, "also register the test tools Noop and Sleep")
	f.IntVar(&executors, "executors", 2, "executor workers")
	f.IntVar(&reorders, "reorders", 1, "reorder instances")
	f.IntVar(&maxConc, "max-concurrency", 0, "per-turn concurrency limit (default $TOOLWIRE_MAX_TOOL_USE_CONCURRENCY or 10)")
	return cmd
}
