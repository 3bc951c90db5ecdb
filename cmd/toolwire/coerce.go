package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/coercion"
	"github.com/toolwire/toolwire/sanitizer"
)

// Exit statuses of coerce and sanitize, carried by an *exitError.
const (
	exitInvalid = 1 // coerce: a verdict was printed, and it is "not valid"
	exitUsage   = 2 // a usage error: nothing was printed on stdout
)

// exitError asks main to exit with code instead of the usual 1, after
// printing err like any other error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func usageError(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// usageErrors makes cmd's flag errors and stray arguments usage errors
// (exit 2), and keeps cobra from printing errors or usage itself, whether
// cmd runs under the root command or alone.
func usageErrors(cmd *cobra.Command) {
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s: %w", c.Name(), err)}
	})
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageError("%s: unexpected argument %q (the input is read from stdin)", c.Name(), args[0])
		}
		return nil
	}
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
}

// coerceResult is the one JSON object coerce prints.
type coerceResult struct {
	// Input is the coerced arguments, null when the text is unusable.
	Input    json.RawMessage `json:"input"`
	Valid    bool            `json:"valid"`
	Errors   []string        `json:"errors"`
	Repaired bool            `json:"repaired"`
}

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

	res := coerceResult{Errors: []string{}}
	args := json.RawMessage(in)
	if raw {
		var perr error
		args, res.Repaired, perr = coercion.ParseRaw(string(in))
		if perr != nil {
			res.Errors = append(res.Errors, sanitizer.Clean(perr.Error()))
			return writeVerdict(cmd, &res)
		}
	} else if !isJSONObject(in) {
		return usageError("coerce: stdin is not a JSON object; use --raw for the argument text as the model streamed it")
	}

	out, err := schema.Apply(args)
	if out != nil {
		res.Input = compactJSON(out)
	}
	var ve *coercion.ValidationError
	switch {
	case err == nil:
		res.Valid = true
	case errors.As(err, &ve):
		res.Errors = append(res.Errors, ve.Lines()...)
	default:
		res.Errors = append(res.Errors, sanitizer.Clean(err.Error()))
	}
	return writeVerdict(cmd, &res)
}

// writeVerdict prints res and returns the error that gives its exit status.
func writeVerdict(cmd *cobra.Command, res *coerceResult) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetEscapeHTML(false) // the text is for models and scripts, not browsers
	if err := enc.Encode(res); err != nil {
		return usageError("coerce: writing the result: %w", err)
	}
	if !res.Valid {
		return &exitError{code: exitInvalid, err: errors.New("coerce: the arguments are not valid (see errors on stdout)")}
	}
	return nil
}

// isJSONObject reports whether data is one JSON object, spaces around
// allowed.
func isJSONObject(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(data)
}

// compactJSON writes valid JSON on one line, keeping number literals and
// key order as they are. Each byte of invalid UTF-8, which can only sit
// inside strings, becomes U+FFFD, as JSON decoders read it.
func compactJSON(data []byte) json.RawMessage {
	if !utf8.Valid(data) {
		fixed := make([]byte, 0, len(data)+16)
		for len(data) > 0 {
			r, size := utf8.DecodeRune(data)
			if r == utf8.RuneError && size == 1 {
				fixed = utf8.AppendRune(fixed, utf8.RuneError)
			} else {
				fixed = append(fixed, data[:size]...)
			}
			data = data[size:]
		}
		data = fixed
	}
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return data // not reached: Apply returns valid JSON
	}
	return b.Bytes()
}
