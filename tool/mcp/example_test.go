package mcp_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/mcp"
)

// The toolwire name of an MCP tool: characters model APIs do not accept in
// tool names become "_".
func ExampleToolName() {
	fmt.Println(mcp.ToolName("github", "create_issue"))
	fmt.Println(mcp.ToolName("fs", "read.file"))
	// Output:
	// mcp__github__create_issue
	// mcp__fs__read_file
}

// Connecting to a stdio MCP server and hosting its tools beside the
// built-ins. The server is restarted if it dies, until Close. (It needs the
// server's program installed, so this example is compiled, not run.)
func ExampleConnect() {
	ctx := context.Background()
	srv, err := mcp.Connect(ctx, mcp.ServerConfig{
		Name:    "docs",
		Command: "docs-mcp",
		Args:    []string{"--stdio"},
	}, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	for _, info := range srv.Infos() {
		fmt.Println(info.Name, "read-only:", info.ReadOnly)
	}
	reg, err := tool.NewRegistry(srv.Tools()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = reg // give it to pipeline.Config.Tools or executor.Config.Tools
}
