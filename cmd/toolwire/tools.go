package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/toolset"
	"github.com/toolwire/toolwire/tool"
)

// toolSource substitutes tools in what the tools command assembles; tests
// give their own built-ins and external tools.
type toolSource func(*toolset.Options)

// defaultTools leaves the tools as configured: the built-ins, the test
// tools when asked, and the configuration's MCP servers' tools.
func defaultTools(*toolset.Options) {}

// toolsFlags are the flags every tools command reads.
type toolsFlags struct {
	configFile    string
	testTools     bool
	contextWindow int
}

// load assembles the tools as a request would carry them; ctx bounds
// connecting the MCP servers (an interrupt stops them starting).
func (f *toolsFlags) load(ctx context.Context, src toolSource) (*toolset.Set, error) {
	o := toolset.Options{TestTools: f.testTools, ContextWindow: f.contextWindow}
	src(&o)
	return loadTools(ctx, f.configFile, o)
}

func newTools() *cobra.Command { return newToolsWith(defaultTools) }

func newToolsWith(src toolSource) *cobra.Command {
	var (
		flags  toolsFlags
		format string
		prompt bool
	)
	cmd := &cobra.Command{
		Use:   "tools [--format anthropic|openai] [--config FILE]",
		Short: "Print the tools list exactly as it would be sent to the model",
		Long: `tools prints the request's "tools" list: the built-in tools sorted by name, then
the external tools sorted by name, without those a deny rule names as a whole,
and without the deferred ones (docs/tools.md). The output is a JSON array
in the Anthropic or the OpenAI format, byte-identical for the same tools whatever
their registration order. With --prompt it prints instead the list of deferred
tool names that goes into the system prompt (nothing when none is deferred).

--config FILE is a JSON file such as
  {"deny": ["Bash(rm:*)", "Write"], "tool_search": "auto:10"}
TOOLWIRE_TOOL_SEARCH (on, off, auto, auto:N) overrides its tool_search.

Exit status: 0 on success, 1 when the configuration is bad, 2 on a usage error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := tool.ParseFormat(format)
			if err != nil {
				return usageError("tools: --format: %w", err)
			}
			s, err := flags.load(cmd.Context(), src)
			if err != nil {
				return fmt.Errorf("tools: %w", err)
			}
			defer s.Close()
			if prompt {
				_, err := io.WriteString(cmd.OutOrStdout(), tool.DeferredToolsPrompt(s.Plan.DeferredNames()))
				return err
			}
			out, err := tool.Render(f, s.Plan.Entries(nil))
			if err != nil {
				return fmt.Errorf("tools: %w", err)
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	toolsUsage(cmd)
	pf := cmd.PersistentFlags()
	pf.StringVar(&flags.configFile, "config", "", "configuration file, YAML or JSON: every setting, docs/configuration.md (default $TOOLWIRE_CONFIG)")
	pf.BoolVar(&flags.testTools, "test-tools", false, "include the test tools (Noop, Sleep, Chdir)")
	pf.IntVar(&flags.contextWindow, "context-window", tool.DefaultContextWindow, "the model's context window in tokens, for tool_search auto")
	cmd.Flags().StringVar(&format, "format", string(tool.FormatAnthropic), "anthropic or openai")
	cmd.Flags().BoolVar(&prompt, "prompt", false, "print the deferred tool names for the system prompt instead")
	cmd.AddCommand(newToolsCheck(src, &flags), newToolsSearch(src, &flags))
	return cmd
}

// writeJSONLine writes v as one line of compact JSON without HTML escaping.
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
