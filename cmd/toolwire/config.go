package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/config"
	"github.com/toolwire/toolwire/internal/lease"
)

func newConfig() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check a configuration file, or print the configuration a process would run with",
	}
	cmd.AddCommand(newConfigCheck(), newConfigPrint())
	return cmd
}

func newConfigCheck() *cobra.Command {
	return &cobra.Command{
		Use:   "check FILE",
		Short: "Check a configuration file: exit 0 when it is good, 1 naming the bad field, its line and column",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := config.Load(args[0]); err != nil {
				return err
			}
			if _, err := fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", args[0]); err != nil {
				return err
			}
			return nil
		},
	}
}

func newConfigPrint() *cobra.Command {
	var configFile string
	cmd := &cobra.Command{
		Use:   "print [--config FILE]",
		Short: "Print the effective configuration as JSON, each setting with where it came from, secrets redacted",
		Long: `print shows what serve would run with: the file's fields, what
TOOLWIRE_TOOL_SEARCH and TOOLWIRE_MAX_TOOL_USE_CONCURRENCY set over them, and every
default filled in. API tokens, MCP servers' environment values and headers are
redacted. Flags given to serve override all of it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(configFile)
			if err != nil {
				return err
			}
			var o config.Overrides
			if v := os.Getenv(envToolSearch); v != "" {
				m, err := searchModeFromEnv()
				if err != nil {
					return err
				}
				o.ToolSearch, o.ToolSearchFrom = m.String(), "env "+envToolSearch
			}
			if v := os.Getenv(envMaxConcurrency); v != "" {
				n, err := maxConcurrency(0)
				if err != nil {
					return err
				}
				o.MaxConcurrency, o.MaxConcurrencyFrom = n, "env "+envMaxConcurrency+"="+strconv.Itoa(n)
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(cfg.Effective(configFile, o, lease.DefaultMaxConcurrency))
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "the configuration file (none: the defaults)")
	return cmd
}
