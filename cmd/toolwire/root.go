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
	root.AddCommand(newServe(), newRun(), newDemo(), newCancel(), newParse(), newCoerce(), newSanitize(), newProxy(), newTools(), newLoadtest(), newDLQ(), newTop(), newConfig())
	root.AddCommand(newAuth())
	return root
}

// loadTools assembles the process's tools once: o with the configuration
// file (if any) and TOOLWIRE_TOOL_SEARCH read into it. ctx bounds
// connecting the MCP servers. Close the set to stop them.
func loadTools(ctx context.Context, configFile string, o toolset.Options) (*toolset.Set, error) {
	cfg, err := loadConfig(configFile)
	if err != nil {
		return nil, err
	}
	return buildTools(ctx, cfg, o)
}

// loadConfig reads the configuration file; nil when none is named.
func loadConfig(configFile string) (*config.Config, error) {
	if configFile == "" {
		return nil, nil
	}
	return config.Load(configFile)
}

// buildTools assembles the tools of cfg (nil: no file) as loadTools does.
func buildTools(ctx context.Context, cfg *config.Config, o toolset.Options) (*toolset.Set, error) {
	o.Config = cfg
	mode, err := searchModeFromEnv()
	if err != nil {
		return nil, err
	}
	o.SearchMode = mode
	return toolset.Build(ctx, o)
}
