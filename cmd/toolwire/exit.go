package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Exit statuses other than 1, carried by an *exitError.
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

// usageError is an error that exits 2, formatted like fmt.Errorf.
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
