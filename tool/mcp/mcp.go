// Package mcp turns the tools of MCP servers into toolwire tools
// (docs/tools.md, External tools), using github.com/modelcontextprotocol/go-sdk.
//
// A server is configured as a command spoken to over stdio or a
// streamable-HTTP URL (ServerConfig). Connect starts or reaches it, lists
// its tools (every page) and builds one tool.Tool per MCP tool:
//
//   - name "mcp__<server>__<tool>", characters outside [A-Za-z0-9_-]
//     replaced by "_" (ToolName);
//   - the MCP input schema, {"type":"object"} when there is none; a tool
//     whose schema is not an object schema the router can compile, or
//     whose name collides with an earlier one's after replacing, is left
//     out with a warning;
//   - the description capped at 2,048 characters (CapDescription);
//   - annotations as safety predicates: readOnlyHint → read-only and
//     concurrency-safe, destructiveHint → destructive; only an explicit true
//     counts, everything else keeps the contract's fail-closed defaults;
//   - openWorldHint → the open-world predicate; _meta["anthropic/alwaysLoad"]
//     == true → AlwaysLoad; _meta["anthropic/searchHint"], whitespace
//     collapsed → SearchHint; origin MCP with the server's name (so the tool
//     is deferred unless always-load); user-facing name "<server> - <title
//     or tool> (MCP)". ToolInfo (Server.Infos, Server.Info) holds the same
//     and the tool's name on the server.
//
// A call sends tools/call on the server's live session and maps the result:
// text parts joined, other parts as short placeholders, isError as an error
// result. Progress notifications reach the call's progress callback.
//
// Supervision: when the process (or HTTP session) dies, every call in flight
// gets the error result "MCP server <name> stopped while the call was
// running (<reason>)" — it is not retried, its outcome is unknown — and the
// server is restarted in the background with exponential back-off (100 ms
// doubling to 30 s; back to 100 ms after a session that lived 10 s). A
// call arriving while the server is down waits up to 5 s for the restart,
// then gets "MCP server <name> is not running (restarting): <reason>"; for
// an HTTP server it asks for a connection attempt at once and is answered
// by its outcome, at once when the server refuses connections. An HTTP
// request that finds the server unreachable (connection refused, no route)
// ends the session at once, and a call whose connection failed pings the
// server to tell a dead server from a failed call; a request that cannot
// reach the server gets "MCP server <name> could not be reached (…)".
// Running, Down (why it is not running) and Restarts (those that brought it
// back) report the supervision to readiness checks and metrics.
//
// A stdio server leads a process group of its own, and the whole group is
// stopped — SIGTERM, then SIGKILL — when the session closes (after its
// stdin is closed and it had 2 s to exit) and as soon as the leader exits:
// a server started through a launcher such as npx, which does not exit when
// its stdin closes, does not outlive toolwire or its own restart. Close
// stops the server and the restarts. The tool list is the one read at
// Connect; a restarted server is expected to serve the same tools.
package mcp

import (
	"errors"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
)

// stderrTailBytes is how much of a stdio server's standard error is kept
// to explain its death.
const stderrTailBytes = 2048

// stderrTail receives a stdio server's standard error: each line is logged
// at debug level and the last few are kept.
type stderrTail struct {
	log     *slog.Logger
	mu      sync.Mutex
	partial []byte
	tail    []byte
}

func newStderrTail(log *slog.Logger) *stderrTail { return &stderrTail{log: log} }

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tail = append(t.tail, p...)
	if over := len(t.tail) - stderrTailBytes; over > 0 {
		t.tail = append(t.tail[:0], t.tail[over:]...)
	}
	t.partial = append(t.partial, p...)
	for {
		i := strings.IndexByte(string(t.partial), '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(t.partial[:i])); line != "" {
			t.log.Debug("mcp: server stderr", "line", line)
		}
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > stderrTailBytes {
		t.partial = t.partial[len(t.partial)-stderrTailBytes:]
	}
	return len(p), nil
}

// last is the last non-empty line written, at most 200 characters.
func (t *stderrTail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.tail)), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200]) + "…"
	}
	return line
}

// stopReason explains a session's end: the process's exit status (or the
// connection's error) and the last line of its standard error.
func stopReason(err error, stderr string, http bool) string {
	var reason string
	switch {
	case err != nil:
		reason = err.Error()
	case http:
		reason = "the connection closed"
	default:
		reason = "the process exited"
	}
	if stderr != "" {
		reason += ": " + stderr
	}
	return reason
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// isExit reports whether err is a process's exit status.
func isExit(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}
