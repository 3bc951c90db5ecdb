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
	// Every command that takes settings reads them from its flags, the
	// TOOLWIRE_* variables and the configuration file before it runs
	// (bind.go); a command that needs its own PersistentPreRunE must call
	// bindCommand itself.
	addConfigFlags(root)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return bindCommand(cmd) }
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

// loadConfig reads the configuration file with the variables of its
// structured settings (TOOLWIRE_DENY, ...) laid over it; nil when neither
// names anything.
func loadConfig(configFile string) (*config.Config, error) {
	var cfg *config.Config
	if configFile != "" {
		var err error
		if cfg, err = config.Load(configFile); err != nil {
			return nil, err
		}
	}
	return envOverrides(cfg)
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
