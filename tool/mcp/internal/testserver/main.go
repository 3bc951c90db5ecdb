// Command testserver is the MCP server the tests of package mcp start over
// stdio (see mcptest for its tools).
//
// Environment:
//
//	TESTSERVER_WIPE_LOG        the file each wipe call appends a line to
//	TESTSERVER_PAGE_SIZE       the tools/list page size
//	TESTSERVER_REFUSE_IF       a path: while that file exists, the server exits at once (status 3)
//	TESTSERVER_STARTS          a file each start appends a line to
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolwire/toolwire/tool/mcp/internal/mcptest"
)

func main() {
	if p := os.Getenv("TESTSERVER_REFUSE_IF"); p != "" {
		if _, err := os.Stat(p); err == nil {
			fmt.Fprintln(os.Stderr, "testserver: refusing to start")
			os.Exit(3)
		}
	}
	if p := os.Getenv("TESTSERVER_STARTS"); p != "" {
		if f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(f, "start %d\n", os.Getpid())
			f.Close()
		}
	}
	pageSize, _ := strconv.Atoi(os.Getenv("TESTSERVER_PAGE_SIZE"))
	s := mcptest.New(mcptest.Options{
		WipeLog:  os.Getenv("TESTSERVER_WIPE_LOG"),
		PageSize: pageSize,
		Crash: func() {
			fmt.Fprintln(os.Stderr, "testserver: crash requested")
			os.Exit(1)
		},
	})
	if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(2)
	}
}
