package main

import (
	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/router"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
	"github.com/toolwire/toolwire/tool/testtools"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "toolwire",
		Short:         "Run the tool calls of LLM agents as a pipeline on NATS JetStream",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServe(), newRun(), newDemo(), newCancel(), newParse(), newCoerce(), newSanitize(), newProxy(), newTools())
	return root
}

// registry is the built-in tools, plus the test tools when asked.
func registry(testTools bool) (*tool.Registry, error) {
	tools := builtin.Tools()
	if testTools {
		tools = append(tools, testtools.Tools()...)
	}
	return tool.NewRegistry(tools...)
}

// maxConcurrency is the flag's value, else the environment's, else the default.
func maxConcurrency(flag int) (int, error) {
	if flag > 0 {
		return flag, nil
	}
	return router.MaxConcurrencyFromEnv(0)
}
