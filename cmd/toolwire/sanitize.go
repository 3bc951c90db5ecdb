package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/sanitizer"
)

func newSanitize() *cobra.Command {
	var (
		kind     string
		maxChars int
	)
	cmd := &cobra.Command{
		Use:   "sanitize [--kind error|output] [--max-chars N]",
		Short: "Sanitize a tool error or output (stdin) as the model will see it",
		Long: fmt.Sprintf(`sanitize reads text on stdin and prints it as the executor hands it to the
model (docs/coercion.md, Sanitizing). Nothing is added: no newline at the end.

--kind error (the default): role and turn markup, chat-template tokens,
code-fence lines, CDATA sections, escape sequences, control and invisible
characters are removed until nothing changes; the text is trimmed, capped at
--max-chars characters (default %d) with a marker, and wrapped:
<tool_use_error>…</tool_use_error>. This is the final form the model sees.

--kind output: a successful result keeps its content (fences and tags
included); only escape sequences, control characters other than newline and
tab, and invisible characters are removed. --max-chars caps it (default: no
cap; the executor's own cap is set per tool).

Exit status: 0 on success; 2 on a usage error (an unknown --kind, a negative
or non-numeric --max-chars, a stray argument); 1 if stdin cannot be read.`, sanitizer.DefaultMaxChars),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if kind != "error" && kind != "output" {
				return usageError("sanitize: --kind must be error or output, not %q", kind)
			}
			if maxChars < 0 {
				return usageError("sanitize: --max-chars must be 0 or more, not %d", maxChars)
			}
			in, err := io.ReadAll(cmd.InOrStdin())
			if err != nil {
				return fmt.Errorf("sanitize: reading stdin: %w", err)
			}
			var out string
			if kind == "error" {
				out = sanitizer.Error(string(in), sanitizer.Options{MaxChars: maxChars})
			} else {
				out = sanitizer.Cap(sanitizer.Output(string(in)), maxChars)
			}
			if _, err := io.WriteString(cmd.OutOrStdout(), out); err != nil {
				return fmt.Errorf("sanitize: writing: %w", err)
			}
			return nil
		},
	}
	usageErrors(cmd)
	f := cmd.Flags()
	f.StringVar(&kind, "kind", "error", "what the text is: error or output")
	f.IntVar(&maxChars, "max-chars", 0, fmt.Sprintf("cap in characters, marker included (0: %d for an error, none for an output)", sanitizer.DefaultMaxChars))
	return cmd
}
