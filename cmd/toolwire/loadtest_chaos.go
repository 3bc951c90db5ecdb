package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/chaos"
)

func newLoadtestChaos() *cobra.Command {
	var (
		c        chaos.Config
		jsonFile string
		quiet    bool
	)
	cmd := &cobra.Command{
		Use:   "chaos",
		Short: "Run a 3-node cluster and the stages as processes under load, kill -9 them, and check that nothing was lost",
		Long: `chaos starts a three-node JetStream cluster of toolwire serve processes, a router,
--executors executor and --reorders reorder processes joined to it, and a steady load of
mixed turns (read-only calls, calls with side effects, Bash commands that append to a
ledger). It kills an executor with SIGKILL every --kill-every and restarts it; once each,
it kills and restarts a NATS node, the router and a reorder; and it injects --malformed
hostile events. Then it checks, from the streams and the ledger: no call lost, none
answered twice or out of order, no side effect run twice, every turn complete, every
malformed event dead-lettered, each call a killed executor left started again or
answered within 2 s, and every turn in flight moving again within 10 s of the node's
kill. --json FILE writes the figures (docs/loadtest.md, Chaos). It exits 1 when a check
failed, keeping the logs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bin, err := os.Executable()
			if err != nil {
				return fmt.Errorf("loadtest chaos: %w", err)
			}
			c.Binary = bin
			if !quiet {
				c.Progress = cmd.ErrOrStderr()
			}
			rep, err := chaos.Run(cmd.Context(), c)
			if err != nil {
				return fmt.Errorf("loadtest chaos: %w", err)
			}
			if jsonFile != "" {
				f, err := os.Create(jsonFile)
				if err != nil {
					return fmt.Errorf("loadtest chaos: %w", err)
				}
				if err := rep.WriteJSON(f); err != nil {
					f.Close()
					return fmt.Errorf("loadtest chaos: %w", err)
				}
				if err := f.Close(); err != nil {
					return fmt.Errorf("loadtest chaos: %w", err)
				}
			}
			if err := rep.WriteSummary(cmd.OutOrStdout()); err != nil {
				return err
			}
			if rep.Failed() {
				return fmt.Errorf("loadtest chaos: %d checks failed", len(rep.Problems()))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.DurationVar(&c.Duration, "duration", 0, "how long turns are started (default 60s)")
	f.DurationVar(&c.KillEvery, "kill-every", 0, "pause between two executor kills (default 5s)")
	f.DurationVar(&c.NodeDown, "node-down", 0, "how long the killed NATS node stays away before it is restarted (default 3s)")
	f.IntVar(&c.Concurrency, "concurrency", 0, "turns in flight (default 12)")
	f.Float64Var(&c.Rate, "rate", 0, "open loop: start this many turns a second whatever the pipeline's pace (instead of --concurrency)")
	f.IntVar(&c.MaxInFlight, "max-in-flight", 0, "open loop: at most this many turns unfinished; a turn due beyond it waits (default 1000)")
	f.IntVar(&c.Malformed, "malformed", 0, "hostile events injected during the load (default 10000; -1: none)")
	f.IntVar(&c.Executors, "executors", 0, "executor processes (default 3)")
	f.IntVar(&c.Reorders, "reorders", 0, "reorder processes (default 2)")
	f.DurationVar(&c.MaxRecovery, "max-recovery", 0, "fail when a call a killed executor left took longer to be started again or answered (default 2s)")
	f.DurationVar(&c.MaxNodeRecovery, "max-node-recovery", 0, "fail when a turn in flight took longer to progress after the node's kill (default 10s)")
	f.StringVar(&c.Dir, "dir", "", "keep the stores, logs and ledger here (default: a temporary directory, kept only when a check failed)")
	f.StringVar(&jsonFile, "json", "", "also write the report as JSON to this file")
	f.BoolVar(&quiet, "quiet", false, "no line per kill")
	return cmd
}
