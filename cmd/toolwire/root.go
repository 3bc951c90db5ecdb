package main

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/config"
	"github.com/toolwire/toolwire/internal/toolset"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "toolwire",
		Short:         "Run the tool calls of LLM agents as a pipeline on NATS JetStream",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServe(), newRun(), newDemo(), newCancel(), newParse(), newCoerce(), newSanitize(), newProxy(), newTools(), newLoadtest(), newDLQ())
	return root
}

// loadTools assembles the process's tools once: o with the configuration
// file (if any) and TOOLWIRE_TOOL_SEARCH read into it. ctx bounds
// connecting the MCP servers. Close the set to stop them.
func loadTools(ctx context.Context, configFile string, o toolset.Options) (*toolset.Set, error) {
	if configFile != "" {
		cfg, err := config.Load(configFile)
		if err != nil {
			return nil, err
		}
		o.Config = cfg
	}
	mode, err := searchModeFromEnv()
	if err != nil {
		return nil, err
	}
	o.SearchMode = mode
	return toolset.Build(ctx, o)
}
