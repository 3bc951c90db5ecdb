package main

import (
	"context"
	"log/slog"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/config"
	"github.com/toolwire/toolwire/internal/toolset"
	"github.com/toolwire/toolwire/router"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "toolwire",
		Short:         "Run the tool calls of LLM agents as a pipeline on NATS JetStream",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServe(), newRun(), newDemo(), newCancel(), newParse(), newCoerce(), newSanitize(), newProxy(), newTools())
	return root
}

// tools assembles the process's tools from an optional config file.
func tools(ctx context.Context, configFile string, testTools bool, log *slog.Logger) (*toolset.Set, error) {
	var cfg *config.Config
	if configFile != "" {
		var err error
		if cfg, err = config.Load(configFile); err != nil {
			return nil, err
		}
	}
	return toolset.Build(ctx, cfg, testTools, log)
}

// maxConcurrency is the flag's value, else the environment's, else the default.
func maxConcurrency(flag int) (int, error) {
	if flag > 0 {
		return flag, nil
	}
	return router.MaxConcurrencyFromEnv(0)
}
