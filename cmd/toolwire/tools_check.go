package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

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
			if err != nil {
				return fmt.Errorf("tools check: %w", err)
			}
			defer s.Close()
			t, ok := s.Lookup(args[0])
			if !ok {
				return usageError("tools check: unknown tool %q (the tools are: %s)", args[0], strings.Join(s.KnownNames(), ", "))
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
