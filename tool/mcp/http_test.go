package mcp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/mcp/internal/mcptest"
)

// TestStreamableHTTP runs the test server in process behind the SDK's
// streamable-HTTP handler; the configured headers reach it.
func TestStreamableHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an HTTP server")
	}
	srv := mcptest.New(mcptest.Options{WipeLog: t.TempDir() + "/wipe.log", PageSize: 2})
	handler := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv }, nil)
	var unauthorized atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sesame" {
			unauthorized.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	defer hs.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := Connect(ctx, ServerConfig{Name: "web", URL: hs.URL}, testLog(t)); err == nil {
		t.Fatal("connected without the header")
	}
	if unauthorized.Load() == 0 {
		t.Fatal("the server saw no request")
	}
	s, err := Connect(ctx, ServerConfig{Name: "web", URL: hs.URL, Headers: map[string]string{"Authorization": "Bearer sesame"}}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	var names []string
	for _, tl := range s.Tools() {
		names = append(names, tl.Name())
	}
	slices.Sort(names)
	if want := []string{"mcp__web__charge", "mcp__web__confused", "mcp__web__long_doc", "mcp__web__lookup", "mcp__web__wipe"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	lookup := lookupTool(t, s, "lookup")
	if !lookup.IsConcurrencySafe(nil) || !lookup.IsReadOnly(nil) {
		t.Error("lookup over HTTP is not read-only")
	}
	var progress atomic.Value
	res, err := lookup.Call(ctx, []byte(`{"key":"h","ms":10}`), tool.TurnContext{}, func(s string) { progress.Store(s) })
	if err != nil || res.IsError || res.Content != "lookup h: found" {
		t.Errorf("lookup: %+v %v", res, err)
	}
	if p, _ := progress.Load().(string); p != "looking up h (1/2)" {
		t.Errorf("progress %q", p)
	}
	// Calls run side by side over one session.
	began := time.Now()
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			res, err := lookup.Call(ctx, []byte(`{"key":"p","ms":300}`), tool.TurnContext{}, nil)
			if err == nil && res.IsError {
				err = errString(res.Content)
			}
			errs <- err
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if d := time.Since(began); d >= 900*time.Millisecond { // one after another: at least 900 ms
		t.Errorf("three 300 ms calls took %s", d)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestStreamableHTTPSessionLost: an HTTP server that restarts loses its
// sessions; the session ends, the server is reconnected, calls succeed.
func TestStreamableHTTPSessionLost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an HTTP server")
	}
	srv := mcptest.New(mcptest.Options{WipeLog: t.TempDir() + "/wipe.log"})
	newHandler := func() http.Handler {
		return mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv }, nil)
	}
	var current atomic.Value
	current.Store(newHandler())
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		current.Load().(http.Handler).ServeHTTP(w, r)
	}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Connect(ctx, ServerConfig{Name: "web", URL: hs.URL}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lookup := lookupTool(t, s, "lookup")
	if res, err := lookup.Call(ctx, []byte(`{"key":"a"}`), tool.TurnContext{}, nil); err != nil || res.Content != "lookup a: found" {
		t.Fatalf("first call: %+v %v", res, err)
	}
	current.Store(newHandler()) // the "restarted" server knows no session
	res, err := lookup.Call(ctx, []byte(`{"key":"b"}`), tool.TurnContext{}, nil)
	if err != nil || !res.IsError || !strings.HasPrefix(res.Content, "MCP server web stopped while the call was running (") ||
		!strings.Contains(res.Content, "session not found") {
		t.Errorf("call that found the session gone: %+v %v", res, err)
	}
	res, err = lookup.Call(ctx, []byte(`{"key":"c"}`), tool.TurnContext{}, nil)
	if err != nil || res.IsError || res.Content != "lookup c: found" {
		t.Errorf("call after the reconnect: %+v %v", res, err)
	}

	// A server that is gone: a clear error at once, not after a wait.
	// (httptest's Close would wait for the client's open event stream.)
	hs.Listener.Close()
	hs.CloseClientConnections()
	began := time.Now()
	res, err = lookup.Call(ctx, []byte(`{"key":"d"}`), tool.TurnContext{}, nil)
	if err != nil || !res.IsError || !strings.HasPrefix(res.Content, "MCP server web could not be reached (") {
		t.Errorf("call to a closed server: %+v %v", res, err)
	}
	t.Logf("call to a closed server: %s", res.Content)
	if d := time.Since(began); d > time.Second {
		t.Errorf("the error took %s", d)
	}
}

// httpServer runs the test server as a process serving streamable HTTP at
// addr, until kill; it is killed at the test's end too.
type httpServer struct {
	t    *testing.T
	addr string
	cmd  *exec.Cmd
	done chan struct{}
}

func startHTTPServer(t *testing.T, addr string) *httpServer {
	t.Helper()
	h := &httpServer{t: t, addr: addr, cmd: exec.Command(testServer(t)), done: make(chan struct{})}
	h.cmd.Env = append(os.Environ(), "TESTSERVER_HTTP="+addr, "TESTSERVER_WIPE_LOG="+filepath.Join(t.TempDir(), "wipe.log"))
	h.cmd.Stderr = tWriter{t}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = h.cmd.Wait(); close(h.done) }()
	t.Cleanup(h.kill)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("the HTTP test server did not listen on %s: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill ends the server with SIGKILL, as a crash would, and waits for it.
func (h *httpServer) kill() {
	_ = h.cmd.Process.Kill()
	<-h.done
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestStreamableHTTPServerKilled: an HTTP server killed during a call ends
// that call with an error result at once, calls while it is down are
// answered at once, and calls work again once it is back.
func TestStreamableHTTPServerKilled(t *testing.T) {
	addr := freeAddr(t)
	srv := startHTTPServer(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Connect(ctx, ServerConfig{Name: "web", URL: "http://" + addr}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	lookup := lookupTool(t, s, "lookup")
	if res, err := call(t, lookup, `{"key":"a"}`); err != nil || res.Content != "lookup a: found" {
		t.Fatalf("first call: %+v %v", res, err)
	}

	type out struct {
		res tool.Result
		err error
		at  time.Time
	}
	inFlight := make(chan out, 1)
	go func() {
		res, err := call(t, lookup, `{"key":"slow","ms":30000}`)
		inFlight <- out{res, err, time.Now()}
	}()
	time.Sleep(300 * time.Millisecond) // let the call reach the server
	killed := time.Now()
	srv.kill()
	o := <-inFlight
	noticed := o.at.Sub(killed)
	t.Logf("the call in flight was answered %s after the kill: %q", noticed, o.res.Content)
	if o.err != nil || !o.res.IsError || !strings.HasPrefix(o.res.Content, "MCP server web stopped while the call was running (") ||
		!strings.Contains(o.res.Content, "connection refused") {
		t.Errorf("call in flight: %+v %v", o.res, o.err)
	}
	if noticed > 3*time.Second {
		t.Errorf("the call in flight learned of the kill after %s", noticed)
	}

	for i := range 3 {
		began := time.Now()
		res, err := call(t, lookup, `{"key":"down"}`)
		took := time.Since(began)
		t.Logf("call %d while down: %s: %q", i, took, res.Content)
		if err != nil || !res.IsError || !strings.HasPrefix(res.Content, "MCP server web is not running (restarting): ") ||
			!strings.Contains(res.Content, "connection refused") {
			t.Errorf("call %d while down: %+v %v", i, res, err)
		}
		if took > time.Second {
			t.Errorf("call %d while down took %s", i, took)
		}
	}
	if s.Running() {
		t.Error("running while the server is down")
	}

	startHTTPServer(t, addr)
	began := time.Now()
	res, err := call(t, lookup, `{"key":"back"}`)
	t.Logf("first call after the server is back: %s: %q", time.Since(began), res.Content)
	if err != nil || res.IsError || res.Content != "lookup back: found" {
		t.Errorf("call after the server is back: %+v %v", res, err)
	}
}
