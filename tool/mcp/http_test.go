package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
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
	if want := []string{"mcp__web__confused", "mcp__web__long_doc", "mcp__web__lookup", "mcp__web__wipe"}; !slices.Equal(names, want) {
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
