// Command testserver is the MCP server the tests of package mcp start over
// stdio (see mcptest for its tools), or serve over streamable HTTP.
//
// Environment:
//
//	TESTSERVER_WIPE_LOG        the file each wipe call appends a line to
//	TESTSERVER_PAGE_SIZE       the tools/list page size
//	TESTSERVER_REFUSE_IF       a path: while that file exists, the server exits at once (status 3)
//	TESTSERVER_STARTS          a file each start appends a line to
//	TESTSERVER_IGNORE_EOF      when set, the server keeps running after its stdin closes, as some do
//	TESTSERVER_IGNORE_TERM     when set, SIGTERM is ignored: only SIGKILL stops the server
//	TESTSERVER_HTTP            an address (host:port): serve streamable HTTP there instead of stdio
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

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
	if os.Getenv("TESTSERVER_IGNORE_TERM") != "" {
		signal.Ignore(syscall.SIGTERM)
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
	if addr := os.Getenv("TESTSERVER_HTTP"); addr != "" {
		handler := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return s }, nil)
		fmt.Fprintln(os.Stderr, "testserver:", http.ListenAndServe(addr, handler))
		os.Exit(2)
	}
	var t mcpsdk.Transport = &mcpsdk.StdioTransport{}
	if os.Getenv("TESTSERVER_IGNORE_EOF") != "" {
		t = &mcpsdk.IOTransport{Reader: endless{os.Stdin}, Writer: os.Stdout}
	}
	if err := s.Run(context.Background(), t); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(2)
	}
}

// endless reads stdin and, once it ends, blocks instead of reporting the
// end: the server lives on, as one that does not watch its stdin would.
type endless struct{ r io.Reader }

func (e endless) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	for err == io.EOF {
		// A sleep, not select{}: the runtime would call a process whose
		// goroutines all block forever deadlocked, and end it.
		time.Sleep(time.Hour)
	}
	return n, err
}

func (endless) Close() error { return nil }
