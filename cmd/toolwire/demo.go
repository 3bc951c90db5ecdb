package main

import (
	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/demo"
	"github.com/toolwire/toolwire/internal/toolset"
)

func newDemo() *cobra.Command {
	var executors int
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a recorded model stream through the whole pipeline and show what the agent receives",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			set, err := loadTools(cmd.Context(), "", toolset.Options{})
			if err != nil {
				return err
			}
			defer set.Close()
			return demo.Run(cmd.Context(), cmd.OutOrStdout(), set.Registry, executors)
		},
	}
	cmd.Flags().IntVar(&executors, "executors", 2, "executor workers")
	return cmd
}
