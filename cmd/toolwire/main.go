// Command toolwire runs the tool calls of LLM agents as an event-driven
// pipeline on NATS JetStream. This package only wires flags to packages.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

func main() {
	// First: this binary is also the init of each contained Bash command.
	sandbox.Main()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRoot().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "toolwire:", err)
		stop()
		code := 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		os.Exit(code)
	}
}
