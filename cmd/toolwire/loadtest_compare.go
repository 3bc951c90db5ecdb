package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/loadtest"
)

// runCompare is `loadtest synth --compare`: the workload in both modes,
// both summaries and the ratio, and with jsonFile the comparison as JSON.
func runCompare(cmd *cobra.Command, c loadtest.Config, jsonFile string) error {
	cmp, err := loadtest.Compare(cmd.Context(), c)
	var ce *loadtest.ConfigError
	if errors.As(err, &ce) {
		return usageError("loadtest synth: %w", err)
	}
	if err != nil {
		return fmt.Errorf("loadtest synth: %w", err)
	}
	if jsonFile != "" {
		if err := loadtest.WriteJSONFile(jsonFile, cmp); err != nil {
			return fmt.Errorf("loadtest synth: %w", err)
		}
	}
	if err := cmp.WriteSummary(cmd.OutOrStdout()); err != nil {
		return err
	}
	for _, m := range []struct {
		name string
		r    *loadtest.Report
	}{{loadtest.ModeStreaming, cmp.Streaming}, {loadtest.ModeWaitForEnd, cmp.WaitForEnd}} {
		if r := m.r; r.Failed() {
			return fmt.Errorf("loadtest synth: %s: checks failed: %d lost, %d duplicates, %d order violations, %d concurrency violations",
				m.name, r.Lost, r.Duplicates, r.OrderViolations, r.ConcurrencyViolations)
		}
	}
	return nil
}
