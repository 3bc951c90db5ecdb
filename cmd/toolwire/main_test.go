package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/toolwire/toolwire/internal/proctest"
	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

func TestMain(m *testing.M) {
	// In-process Bash calls are contained as the binary's are.
	sandbox.Main()
	// The MCP tests check that a dead server's pid is gone; an orphan must
	// be reaped for that, and the init of a container may never reap.
	if err := proctest.Subreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "toolwire tests: cannot reap orphans; a dead server's pid may look alive:", err)
	}
	os.Exit(m.Run())
}
