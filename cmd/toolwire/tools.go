package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/config"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
	"github.com/toolwire/toolwire/tool/mcp"
	"github.com/toolwire/toolwire/tool/testtools"
)

// toolSource gives the built-in and the external tools the tools command
// shows; tests substitute their own.
type toolSource func(testTools bool) (builtins, externals []*tool.Tool)

// defaultTools are the built-in tools, plus the test tools when asked (they
// run in-process like the built-ins). The configuration's MCP servers add
// the external tools (load connects them).
func defaultTools(testTools bool) (builtins, externals []*tool.Tool) {
	builtins = builtin.Tools()
	if testTools {
		builtins = append(builtins, testtools.Tools()...)
	}
	return builtins, nil
}

// toolsFlags are the flags every tools command reads.
type toolsFlags struct {
	configFile    string
	testTools     bool
	contextWindow int
}

// toolSet is the tools as a request would carry them.
type toolSet struct {
	// known is every tool, deny rules aside, built-ins first.
	known []*tool.Tool
	// pool is what the deny rules leave (Assemble), with ToolSearch.
	pool []*tool.Tool
	plan tool.Plan
	// servers are the MCP servers connected for their tools.
	servers []*mcp.Server
}

// close stops the MCP servers load connected.
func (s *toolSet) close() {
	for _, srv := range s.servers {
		_ = srv.Close()
	}
}

// load assembles the pool and plans deferral as a request would; ctx
// bounds connecting the MCP servers (an interrupt stops them starting).
func (f *toolsFlags) load(ctx context.Context, src toolSource) (*toolSet, error) {
	var cfg *config.Config
	if f.configFile != "" {
		var err error
		if cfg, err = config.Load(f.configFile); err != nil {
			return nil, err
		}
	}
	mode, err := cfg.ToolSearchMode()
	if err != nil {
		return nil, err
	}
	builtins, externals := src(f.testTools)
	s := &toolSet{}
	if cfg != nil {
		for _, sc := range cfg.MCPServers {
			srv, err := mcp.Connect(ctx, sc, nil)
			if err != nil {
				s.close()
				return nil, fmt.Errorf("MCP server %s: %w", sc.Name, err)
			}
			s.servers = append(s.servers, srv)
			externals = append(externals[:len(externals):len(externals)], srv.Tools()...)
		}
	}
	search := tool.NewToolSearch(func() []*tool.Tool { return s.plan.Deferred })
	builtins = append(builtins[:len(builtins):len(builtins)], search)
	s.known = tool.Assemble(builtins, externals, nil)
	s.pool = tool.Assemble(builtins, externals, cfg.Rules())
	s.plan = tool.PlanDeferral(s.pool, mode, f.contextWindow)
	return s, nil
}

// lookup finds a known tool by name or alias.
func (s *toolSet) lookup(name string) (*tool.Tool, bool) {
	for _, t := range s.known {
		if t.Name() == name {
			return t, true
		}
	}
	for _, t := range s.known {
		for _, a := range t.Aliases() {
			if a == name {
				return t, true
			}
		}
	}
	return nil, false
}

func (s *toolSet) names() string {
	names := make([]string, len(s.known))
	for i, t := range s.known {
		names[i] = t.Name()
	}
	return strings.Join(names, ", ")
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
			if s != nil {
				defer s.close()
			}
			if err != nil {
				return fmt.Errorf("tools: %w", err)
			}
			if prompt {
				_, err := io.WriteString(cmd.OutOrStdout(), tool.DeferredToolsPrompt(s.plan.DeferredNames()))
				return err
			}
			out, err := tool.Render(f, s.plan.Entries(nil))
			if err != nil {
				return fmt.Errorf("tools: %w", err)
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	toolsUsage(cmd)
	pf := cmd.PersistentFlags()
	pf.StringVar(&flags.configFile, "config", "", "JSON configuration file: {\"deny\": [rules], \"tool_search\": \"on|off|auto[:N]\"}")
	pf.BoolVar(&flags.testTools, "test-tools", false, "include the test tools (Noop, Sleep, Chdir)")
	pf.IntVar(&flags.contextWindow, "context-window", tool.DefaultContextWindow, "the model's context window in tokens, for tool_search auto")
	cmd.Flags().StringVar(&format, "format", string(tool.FormatAnthropic), "anthropic or openai")
	cmd.Flags().BoolVar(&prompt, "prompt", false, "print the deferred tool names for the system prompt instead")
	cmd.AddCommand(newToolsCheck(src, &flags), newToolsSearch(src, &flags))
	return cmd
}

// toolsUsage makes flag errors usage errors (exit 2).
func toolsUsage(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s: %w", c.CommandPath(), err)}
	})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
}

// exactArgs is cobra.ExactArgs as a usage error naming what is expected.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("%s: want %s, got %d argument(s)", c.CommandPath(), what, len(args))
		}
		return nil
	}
}

// checkOutput is the line tools check prints.
type checkOutput struct {
	Tool            string  `json:"tool"`
	ConcurrencySafe bool    `json:"concurrency_safe"`
	ReadOnly        bool    `json:"read_only"`
	Destructive     bool    `json:"destructive"`
	Error           *string `json:"error"`
}

func newToolsCheck(src toolSource, flags *toolsFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check NAME 'INPUT_JSON'",
		Short: "Print a tool's safety predicates for one input",
		Long: `check evaluates the tool's safety predicates on the input, as the executor does
before it starts a call, and prints one JSON object:
  {"tool":"Bash","concurrency_safe":true,"read_only":true,"destructive":false,"error":null}
A call runs beside others only when concurrency_safe is true. A predicate that
fails counts as false; error then says which one failed and why.

NAME is a tool's name or alias; deny rules do not hide a tool from check.
Exit status: 0 when the object is printed, 2 for an unknown tool, an input that
is not a JSON object, or another usage error.`,
		Args: exactArgs(2, "NAME and INPUT_JSON"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := flags.load(cmd.Context(), src)
			if s != nil {
				defer s.close()
			}
			if err != nil {
				return fmt.Errorf("tools check: %w", err)
			}
			t, ok := s.lookup(args[0])
			if !ok {
				return usageError("tools check: unknown tool %q (the tools are: %s)", args[0], s.names())
			}
			input := []byte(args[1])
			if err := checkObject(input); err != nil {
				return usageError("tools check: INPUT_JSON %w", err)
			}
			safety := t.Safety(input)
			out := checkOutput{Tool: t.Name(), ConcurrencySafe: safety.ConcurrencySafe, ReadOnly: safety.ReadOnly, Destructive: safety.Destructive}
			if safety.Err != nil {
				msg := safety.Err.Error()
				out.Error = &msg
			}
			return writeJSONLine(cmd.OutOrStdout(), out)
		},
	}
	toolsUsage(cmd)
	return cmd
}

// checkObject says what is wrong with input as a tool call's input.
func checkObject(input []byte) error {
	var v any
	if err := json.Unmarshal(input, &v); err != nil {
		return fmt.Errorf("is not valid JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("must be a JSON object, like '{\"command\":\"ls\"}'")
	}
	return nil
}

func newToolsSearch(src toolSource, flags *toolsFlags) *cobra.Command {
	var (
		maxResults int
		deferred   bool
		scores     bool
	)
	cmd := &cobra.Command{
		Use:   "search \"QUERY\" [--max-results N]",
		Short: "Run a ToolSearch query from the command line",
		Long: `search runs the query the way the ToolSearch tool does (docs/tools.md) and
prints what the tool returns: one JSON object with the query, the matched names
best first, how many tools were searched, and the matched tools' definitions.

Query forms: "select:A,B" (exact names), an exact name, "mcp__server" (that
server's tools), or keywords, "+term" for a required one. Name parts score 10
(MCP 12), part of a name part 5 (MCP 6), a search-hint word 4, a description
word 2, a substring of the full name 3 when nothing else matched.

It searches every tool of the pool (deny rules applied) but ToolSearch; with
--deferred only the tools deferred under the current tool_search mode, exactly
what the model's ToolSearch sees. --scores prints "SCORE NAME" lines instead.`,
		Args: exactArgs(1, "one QUERY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if maxResults < 0 {
				return usageError("tools search: --max-results must be positive")
			}
			s, err := flags.load(cmd.Context(), src)
			if s != nil {
				defer s.close()
			}
			if err != nil {
				return fmt.Errorf("tools search: %w", err)
			}
			catalog := s.plan.Deferred
			if !deferred {
				catalog = nil
				for _, t := range s.pool {
					if t.Name() != tool.ToolSearchName {
						catalog = append(catalog, t)
					}
				}
			}
			w := cmd.OutOrStdout()
			if scores {
				var b bytes.Buffer
				for _, m := range tool.Search(catalog, args[0], maxResults) {
					fmt.Fprintf(&b, "%d %s\n", m.Score, m.Tool.Name())
				}
				_, err := w.Write(b.Bytes())
				return err
			}
			out, err := tool.SearchJSON(catalog, args[0], maxResults)
			if err != nil {
				return fmt.Errorf("tools search: %w", err)
			}
			_, err = w.Write(append(out, '\n'))
			return err
		},
	}
	toolsUsage(cmd)
	cmd.Flags().IntVar(&maxResults, "max-results", tool.DefaultMaxResults, "how many tools a keyword search returns at most")
	cmd.Flags().BoolVar(&deferred, "deferred", false, "search only the tools deferred under the current mode")
	cmd.Flags().BoolVar(&scores, "scores", false, "print SCORE NAME lines instead of the JSON result")
	return cmd
}

// writeJSONLine writes v as one line of compact JSON without HTML escaping.
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
