package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/tool"
)

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
			if err != nil {
				return fmt.Errorf("tools search: %w", err)
			}
			defer s.Close()
			catalog := s.Searchable(deferred)
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
