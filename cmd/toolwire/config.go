package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/config"
	"github.com/toolwire/toolwire/internal/lease"
	"go.yaml.in/yaml/v3"
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
		Short: "Check a configuration file (YAML or JSON): exit 0 when it is good, 1 naming the bad field, its line and column",
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
	var format string
	cmd := &cobra.Command{
		Use:   "print [--config FILE] [--format yaml|json] [serve's flags]",
		Short: "Print the effective configuration, each setting with where it came from, secrets redacted",
		Long: `print shows what serve would run with: every setting (docs/configuration.md) with
its value and where it came from: a flag (print takes serve's flags), a TOOLWIRE_*
variable, the file (--config, else $TOOLWIRE_CONFIG) or the default. API tokens,
NATS passwords and tokens, MCP servers' environment values and headers are redacted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "yaml" && format != "json" {
				return usageError("config print: --format %q: want yaml or json", format)
			}
			b, err := bindFlags(cmd.Flags(), bindings["serve"])
			if err != nil {
				return err
			}
			cfg, err := loadConfig(b.file)
			if err != nil {
				return err
			}
			o := config.Overrides{Values: b.from}
			if v := os.Getenv(envToolSearch); v != "" {
				m, err := searchModeFromEnv()
				if err != nil {
					return err
				}
				o.ToolSearch, o.ToolSearchFrom = m.String(), "env "+envToolSearch
			}
			for _, s := range config.Settings() {
				if _, done := b.from[s.Key]; done || s.Kind == config.KindJSON || s.Key == "tool_search" {
					continue
				}
				v, from, err := resolve(s, cfg)
				if err != nil {
					return err
				}
				b.from[s.Key] = config.Sourced[string]{Value: v, From: from}
			}
			return writeEffective(cmd.OutOrStdout(), format, cfg.Effective(b.file, o, lease.DefaultMaxConcurrency))
		},
	}
	// The flags of serve, for the configuration serve would run with.
	cmd.Flags().AddFlagSet(newServe().Flags())
	cmd.Flags().StringVar(&format, "format", "json", "json or yaml")
	return cmd
}

// writeEffective writes e as JSON, or as YAML in the same order.
func writeEffective(w io.Writer, format string, e config.Effective) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return err
	}
	if format == "json" {
		_, err := w.Write(buf.Bytes())
		return err
	}
	// JSON is YAML: read it as a node tree, which keeps the order, and
	// write it back in block style.
	var doc yaml.Node
	if err := yaml.Unmarshal(buf.Bytes(), &doc); err != nil {
		return err
	}
	blockStyle(&doc)
	ye := yaml.NewEncoder(w)
	ye.SetIndent(2)
	if err := ye.Encode(&doc); err != nil {
		return err
	}
	return ye.Close()
}

// blockStyle clears the flow and quoting styles of JSON read as YAML (a
// string that would read as another type stays quoted), but keeps each
// setting's {value, from} on its line.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.MappingNode && len(n.Content) == 4 && n.Content[0].Value == "value" && n.Content[2].Value == "from" {
		n.Style = yaml.FlowStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}
