package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolwire/toolwire/internal/proctest"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/mcp/internal/mcptest"
)

var (
	serverBinOnce sync.Once
	serverBin     string
	serverBinErr  error
	binDir        string
)

func TestMain(m *testing.M) {
	if err := proctest.Subreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "mcp tests: cannot reap orphans; a dead server's pid may look alive:", err)
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// testServer builds the stdio test server once per test binary.
func testServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real MCP server processes")
	}
	serverBinOnce.Do(func() {
		binDir, serverBinErr = os.MkdirTemp("", "mcp-testserver-")
		if serverBinErr != nil {
			return
		}
		serverBin = filepath.Join(binDir, "testserver")
		out, err := exec.Command("go", "build", "-o", serverBin, "./internal/testserver").CombinedOutput()
		if err != nil {
			serverBinErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if serverBinErr != nil {
		t.Fatal(serverBinErr)
	}
	return serverBin
}

// testLog logs through t, for the server's logs to show in failures.
func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// connect starts the stdio test server under the name "tsrv" with extra
// environment; it is closed at the test's end.
func connect(t *testing.T, name string, env ...string) *Server {
	t.Helper()
	cfg := ServerConfig{Name: name, Command: testServer(t), Env: append([]string{"TESTSERVER_WIPE_LOG=" + filepath.Join(t.TempDir(), "wipe.log")}, env...)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Connect(ctx, cfg, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func lookupTool(t *testing.T, s *Server, short string) *tool.Tool {
	t.Helper()
	name := ToolName(s.Name(), short)
	for _, tl := range s.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func call(t *testing.T, tl *tool.Tool, input string) (tool.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return tl.Call(ctx, json.RawMessage(input), tool.TurnContext{}, nil)
}

func TestStdioTools(t *testing.T) {
	// A page size of 2 makes the listing take several pages.
	s := connect(t, "t.srv", "TESTSERVER_PAGE_SIZE=2")
	var names []string
	for _, tl := range s.Tools() {
		names = append(names, tl.Name())
	}
	slices.Sort(names)
	// badschema is left out: the router could not compile its schema.
	want := []string{"mcp__t_srv__charge", "mcp__t_srv__confused", "mcp__t_srv__crash", "mcp__t_srv__long_doc", "mcp__t_srv__lookup", "mcp__t_srv__wipe"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	if len(s.Infos()) != len(s.Tools()) {
		t.Fatalf("%d infos for %d tools", len(s.Infos()), len(s.Tools()))
	}

	in := json.RawMessage(`{}`)
	for _, c := range []struct {
		tool                  string
		safe, ro, destr, open bool
		alwaysLoad            bool
		hint, mcpName, title  string
	}{
		{tool: "lookup", safe: true, ro: true, alwaysLoad: true, hint: "find a record by its key", mcpName: "lookup", title: "Lookup"},
		{tool: "wipe", destr: true, mcpName: "wipe"},
		{tool: "long_doc", open: true, mcpName: "long.doc"},
		{tool: "confused", destr: true, mcpName: "confused"},
		{tool: "crash", mcpName: "crash"},
	} {
		tl := lookupTool(t, s, c.tool)
		if tl.IsConcurrencySafe(in) != c.safe || tl.IsReadOnly(in) != c.ro || tl.IsDestructive(in) != c.destr {
			t.Errorf("%s: safe %v read-only %v destructive %v, want %v %v %v", c.tool,
				tl.IsConcurrencySafe(in), tl.IsReadOnly(in), tl.IsDestructive(in), c.safe, c.ro, c.destr)
		}
		if tl.IsOpenWorld(in) != c.open || tl.AlwaysLoad() != c.alwaysLoad || tl.SearchHint() != c.hint ||
			tl.Origin() != (tool.Origin{Kind: tool.OriginMCP, Server: "t.srv"}) || tl.Origin().String() != "mcp:t.srv" {
			t.Errorf("%s: open world %v, always load %v, hint %q, origin %v", c.tool, tl.IsOpenWorld(in), tl.AlwaysLoad(), tl.SearchHint(), tl.Origin())
		}
		wantUser := "t.srv - " + c.mcpName + " (MCP)"
		if c.title != "" {
			wantUser = "t.srv - " + c.title + " (MCP)"
		}
		if tl.UserFacingName() != wantUser {
			t.Errorf("%s: user-facing name %q, want %q", c.tool, tl.UserFacingName(), wantUser)
		}
		i, ok := s.Info(tl.Name())
		if !ok {
			t.Fatalf("%s: no info", tl.Name())
		}
		if i.OpenWorld != c.open || i.AlwaysLoad != c.alwaysLoad || i.SearchHint != c.hint || i.MCPName != c.mcpName ||
			i.Title != c.title || i.Server != "t.srv" || i.Origin() != "mcp:t.srv" || i.ReadOnly != c.ro || i.Destructive != c.destr {
			t.Errorf("%s: info %+v", c.tool, i)
		}
	}

	// The description cap.
	long := lookupTool(t, s, "long_doc")
	d := long.Description()
	if utf8.RuneCountInString(mcptest.LongDescription) <= MaxDescriptionChars {
		t.Fatal("the test description is not long enough")
	}
	if utf8.RuneCountInString(d) > MaxDescriptionChars || !strings.HasSuffix(d, TruncationMark) ||
		!strings.HasPrefix(mcptest.LongDescription, strings.TrimSuffix(d, TruncationMark)) || !utf8.ValidString(d) {
		t.Errorf("long description: %d runes, %q…%q", utf8.RuneCountInString(d), d[:20], d[len(d)-30:])
	}
	if i, _ := s.Info(long.Name()); !i.DescriptionTruncated {
		t.Error("DescriptionTruncated not set")
	}
	if got := lookupTool(t, s, "lookup").Description(); got != "Looks a key up after sleeping ms milliseconds." {
		t.Errorf("short description changed: %q", got)
	}
	var schema map[string]any
	if err := json.Unmarshal(lookupTool(t, s, "lookup").InputSchema(), &schema); err != nil || schema["type"] != "object" || schema["required"] == nil {
		t.Errorf("lookup schema %s (%v)", lookupTool(t, s, "lookup").InputSchema(), err)
	}

	// Calls, with progress.
	var progress []string
	var mu sync.Mutex
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := lookupTool(t, s, "lookup").Call(ctx, json.RawMessage(`{"key":"k1","ms":10}`), tool.TurnContext{}, func(text string) {
		mu.Lock()
		progress = append(progress, text)
		mu.Unlock()
	})
	if err != nil || res.IsError || res.Content != "lookup k1: found" {
		t.Errorf("lookup: %+v %v", res, err)
	}
	mu.Lock()
	if !slices.Equal(progress, []string{"looking up k1 (1/2)"}) {
		t.Errorf("progress %q", progress)
	}
	mu.Unlock()

	res, err = call(t, long, `{}`)
	wantText := "first\n[image: image/png]\n[audio: audio/wav]\n[resource link: file:///tmp/linked.txt]\n[resource: file:///tmp/note.txt]\nnote text\n[resource: file:///tmp/data.bin (application/octet-stream, 3 bytes)]\nlast"
	if err != nil || res.IsError || res.Content != wantText {
		t.Errorf("long.doc: %q %v %v", res.Content, res.IsError, err)
	}
	res, err = call(t, long, `{"fail":true}`)
	if err != nil || !res.IsError || !strings.HasPrefix(res.Content, "first\n") {
		t.Errorf("long.doc failing: %+v %v", res, err)
	}
	res, err = call(t, lookupTool(t, s, "confused"), ``)
	if err != nil || res.IsError || res.Content != `{"ok":true}` {
		t.Errorf("confused: %+v %v", res, err)
	}
	// A protocol error (bad arguments for the server's own parsing) is an
	// error result naming the server and the tool; the session survives.
	res, err = call(t, lookupTool(t, s, "lookup"), `{"key":5}`)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "MCP server t.srv, tool lookup:") {
		t.Errorf("bad arguments: %+v %v", res, err)
	}
	if !s.Running() {
		t.Error("not running after a protocol error")
	}
	res, err = call(t, lookupTool(t, s, "lookup"), `{"key":"k2"}`)
	if err != nil || res.Content != "lookup k2: found" {
		t.Errorf("lookup after a protocol error: %+v %v", res, err)
	}
	// The call's idempotency key reaches the server in _meta.
	res, err = lookupTool(t, s, "charge").Call(ctx, json.RawMessage(`{}`), tool.TurnContext{IdempotencyKey: "twk1_abc"}, nil)
	if err != nil || res.Content != "charged once for twk1_abc" {
		t.Errorf("charge: %+v %v", res, err)
	}
}

func TestConnectFails(t *testing.T) {
	bin := testServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := Connect(ctx, ServerConfig{Name: "x", Command: filepath.Join(t.TempDir(), "missing")}, nil); err == nil {
		t.Error("a missing command connected")
	}
	marker := filepath.Join(t.TempDir(), "refuse")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Connect(ctx, ServerConfig{Name: "x", Command: bin, Env: []string{"TESTSERVER_REFUSE_IF=" + marker}}, nil)
	if err == nil || !strings.Contains(err.Error(), "refusing to start") {
		t.Errorf("a server that exits at once: %v", err)
	}
	if _, err := Connect(ctx, ServerConfig{Name: "x"}, nil); err == nil {
		t.Error("an empty config connected")
	}
}

// TestCrashRestart: a server that dies mid-call gives every call in flight
// an error result naming it, and is restarted; later calls succeed.
func TestCrashRestart(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	s := connect(t, "tsrv", "TESTSERVER_STARTS="+starts)
	lookup, crash := lookupTool(t, s, "lookup"), lookupTool(t, s, "crash")

	type out struct {
		res tool.Result
		err error
	}
	slow := make(chan out, 1)
	go func() {
		res, err := call(t, lookup, `{"key":"slow","ms":5000}`)
		slow <- out{res, err}
	}()
	time.Sleep(200 * time.Millisecond) // let the slow call reach the server
	began := time.Now()
	res, err := call(t, crash, `{"ms":100}`)
	const want = "MCP server tsrv stopped while the call was running (exit status 1: testserver: crash requested)"
	if err != nil || !res.IsError || res.Content != want {
		t.Errorf("crash call: %+v %v", res, err)
	}
	o := <-slow
	if o.err != nil || !o.res.IsError || o.res.Content != want {
		t.Errorf("call in flight: %+v %v", o.res, o.err)
	}
	if d := time.Since(began); d > 3*time.Second {
		t.Errorf("the calls in flight learned of the crash after %s", d)
	}

	res, err = call(t, lookup, `{"key":"after"}`)
	if err != nil || res.IsError || res.Content != "lookup after: found" {
		t.Errorf("call after the restart: %+v %v", res, err)
	}
	b, _ := os.ReadFile(starts)
	if n := strings.Count(string(b), "start "); n != 2 {
		t.Errorf("%d starts, want 2:\n%s", n, b)
	}
}

// TestDownAndBackoff: while restarts fail, calls wait briefly and get a
// clear error; once the server can start again, calls succeed.
func TestDownAndBackoff(t *testing.T) {
	defer setVar(&downWait, 300*time.Millisecond)()
	defer setVar(&backoffMax, 400*time.Millisecond)()
	marker := filepath.Join(t.TempDir(), "refuse")
	starts := filepath.Join(t.TempDir(), "starts")
	s := connect(t, "tsrv", "TESTSERVER_REFUSE_IF="+marker, "TESTSERVER_STARTS="+starts)
	lookup := lookupTool(t, s, "lookup")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res, _ := call(t, lookupTool(t, s, "crash"), `{}`); !res.IsError {
		t.Fatalf("crash: %+v", res)
	}
	time.Sleep(500 * time.Millisecond) // a few failed restarts
	began := time.Now()
	res, err := call(t, lookup, `{"key":"k"}`)
	if err != nil || !res.IsError || !strings.HasPrefix(res.Content, "MCP server tsrv is not running (restarting)") ||
		!strings.Contains(res.Content, "refusing to start") {
		t.Errorf("call while down: %+v %v", res, err)
	}
	if d := time.Since(began); d < 250*time.Millisecond || d > 2*time.Second {
		t.Errorf("the call waited %s, want about 300ms", d)
	}
	if s.Running() {
		t.Error("running while every start fails")
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err = call(t, lookup, `{"key":"k"}`)
		if err == nil && !res.IsError {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no successful call after the server could start again: %+v %v", res, err)
		}
	}
	if res.Content != "lookup k: found" {
		t.Errorf("got %q", res.Content)
	}
}

// TestCloseInFlight: Close ends calls in flight with an error result, stops
// the process, and later calls get a clear error.
func TestCloseInFlight(t *testing.T) {
	s := connect(t, "tsrv")
	lookup := lookupTool(t, s, "lookup")
	done := make(chan tool.Result, 1)
	go func() {
		res, _ := call(t, lookup, `{"key":"k","ms":10000}`)
		done <- res
	}()
	time.Sleep(200 * time.Millisecond)
	began := time.Now()
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("Close took %s", d)
	}
	res := <-done
	if !res.IsError || res.Content != "MCP server tsrv was closed while the call was running" {
		t.Errorf("call in flight: %+v", res)
	}
	res, err := call(t, lookup, `{"key":"k"}`)
	if err != nil || !res.IsError || res.Content != "MCP server tsrv is closed" {
		t.Errorf("call after close: %+v %v", res, err)
	}
	if s.Running() {
		t.Error("running after Close")
	}
}

// TestCallCancelled: the executor's context ending (timeout, interrupt)
// returns its error, and the server stays up.
func TestCallCancelled(t *testing.T) {
	s := connect(t, "tsrv")
	lookup := lookupTool(t, s, "lookup")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := lookup.Call(ctx, json.RawMessage(`{"key":"k","ms":5000}`), tool.TurnContext{}, nil)
	if err == nil {
		t.Fatal("no error from a cancelled call")
	}
	res, err := call(t, lookup, `{"key":"k2"}`)
	if err != nil || res.Content != "lookup k2: found" || !s.Running() {
		t.Errorf("after a cancelled call: %+v %v", res, err)
	}
}

func setVar[T any](p *T, v T) (restore func()) {
	old := *p
	*p = v
	return func() { *p = old }
}
