package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/demo"
	"github.com/toolwire/toolwire/internal/localrun"
	"github.com/toolwire/toolwire/internal/toolset"
)

func newDemo() *cobra.Command {
	var executors int
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a recorded model stream through the whole pipeline and show what the agent receives",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "toolwire-demo-project-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			if err := demo.Setup(dir); err != nil {
				return err
			}
			set, err := loadTools(cmd.Context(), "", toolset.Options{})
			if err != nil {
				return err
			}
			defer set.Close()
			reg := set.Registry
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "toolwire demo: a recorded Anthropic stream with 6 tool calls, replayed at model speed\n")
			fmt.Fprintf(out, "through router → %d executor(s) → reorder on an embedded NATS JetStream server.\n", executors)
			fmt.Fprintf(out, "Working directory: %s\n\n", dir)
			rep, err := localrun.Run(cmd.Context(), localrun.Options{
				Format: "anthropic", Stream: demo.Stream, Pace: demo.Pace, WorkDir: dir, Tools: reg, Executors: executors,
			}, nil)
			if err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			demo.Render(out, rep)
			return nil
		},
	}
	cmd.Flags().IntVar(&executors, "executors", 2, "executor workers")
	return cmd
}
