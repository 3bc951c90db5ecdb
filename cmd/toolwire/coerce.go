package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/coercion"
	"github.com/toolwire/toolwire/internal/argcheck"
)

func newCoerce() *cobra.Command {
	var (
		schemaFile string
		raw        bool
	)
	cmd := &cobra.Command{
		Use:   "coerce --schema FILE [--raw]",
		Short: "Coerce and validate a tool call's arguments (stdin) against the tool's input schema",
		Long: `coerce does to one tool call's arguments what the router does before a call is
dispatched (docs/coercion.md): parse (with --raw), coerce mistyped values
guided by the schema, and validate.

The tool's input schema (the {"type":"object","properties":…} object) is read
from FILE; stdin holds the arguments: a JSON object, or with --raw the argument
text exactly as the model streamed it (empty text means {}; lossless damage such
as a code fence or a trailing comma is repaired; text cut off inside a string
is rejected, never run as {}).

It prints one JSON object on one line:

  {"input": <coerced arguments, or null if unusable>, "valid": true|false,
   "errors": ["…"], "repaired": true|false}

errors holds what the model would be told, one entry per problem, sanitized:
the parse error with its offset, or "path: what was expected, what came" for
each failing path. repaired says --raw text needed repair.

Exit status:
  0  the arguments are valid
  1  they are not: the text cannot be parsed (--raw) or fails validation;
     the verdict above is printed all the same
  2  usage error, and nothing is printed on stdout: a missing --schema,
     "--schema -" (stdin holds the arguments), a schema file that cannot be
     read or does not compile (only local $refs are allowed), without --raw
     stdin that is not a JSON object, stdin that cannot be read, a bad flag
     or a stray argument`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCoerce(cmd, schemaFile, raw)
		},
	}
	usageErrors(cmd)
	f := cmd.Flags()
	f.StringVar(&schemaFile, "schema", "", "file holding the tool's input schema (JSON Schema, draft 2020-12 or 7); required")
	f.BoolVar(&raw, "raw", false, "stdin is the argument text exactly as the model streamed it, not a JSON object")
	return cmd
}

func runCoerce(cmd *cobra.Command, schemaFile string, raw bool) error {
	switch schemaFile {
	case "":
		return usageError("coerce: --schema FILE is required")
	case "-":
		return usageError("coerce: --schema - is not allowed: stdin holds the arguments")
	}
	schemaText, err := os.ReadFile(schemaFile)
	if err != nil {
		return usageError("coerce: reading the schema: %w", err)
	}
	schema, err := coercion.Compile(schemaText)
	if err != nil {
		return usageError("coerce: schema %s: %w", schemaFile, err)
	}
	in, err := io.ReadAll(cmd.InOrStdin())
	if err != nil {
		return usageError("coerce: reading stdin: %w", err)
	}
	v, err := argcheck.Check(schema, in, raw)
	if err != nil {
		return usageError("coerce: stdin is not a JSON object; use --raw for the argument text as the model streamed it")
	}
	return writeVerdict(cmd, v)
}

// writeVerdict prints v and returns the error that gives its exit status.
func writeVerdict(cmd *cobra.Command, v *argcheck.Verdict) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetEscapeHTML(false) // the text is for models and scripts, not browsers
	if err := enc.Encode(v); err != nil {
		return usageError("coerce: writing the result: %w", err)
	}
	if !v.Valid {
		return &exitError{code: exitInvalid, err: errors.New("coerce: the arguments are not valid (see errors on stdout)")}
	}
	return nil
}
