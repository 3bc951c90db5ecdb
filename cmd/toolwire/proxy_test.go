package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/proxy"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool/testtools"
)

func TestProxyFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "anthropic"}, "--upstream"},
		{[]string{"--upstream", "http://127.0.0.1:1"}, "--format"},
		{[]string{"--upstream", "http://127.0.0.1:1", "--format", "nope"}, "unknown stream format"},
		{[]string{"--upstream", "ftp://example.com", "--format", "anthropic"}, "http:// or https://"},
		{[]string{"--upstream", "api.anthropic.com", "--format", "anthropic"}, "http:// or https://"},
		{[]string{"--upstream", "http://127.0.0.1:1", "--format", "anthropic", "--tenant", "a.b"}, "--tenant"},
		{[]string{"--upstream", "http://127.0.0.1:1", "--format", "anthropic", "extra"}, "unknown command"},
		// Flags are checked before connecting: no NATS is needed to get here.
		{[]string{"--upstream", "http://127.0.0.1:1", "--format", "anthropic", "--nats", "nats://127.0.0.1:1"}, "connect"},
	} {
		_, _, err := runSub(t, newProxy, "", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one mentioning %q", c.args, err, c.want)
		}
	}
}

func TestProxyFlagDefaults(t *testing.T) {
	cmd := newProxy()
	for flag, want := range map[string]string{
		"listen": "127.0.0.1:8081", "nats": "nats://127.0.0.1:4222", "upstream": "", "format": "", "tenant": "default",
	} {
		f := cmd.Flags().Lookup(flag)
		if f == nil {
			t.Errorf("no --%s", flag)
			continue
		}
		if f.DefValue != want {
			t.Errorf("--%s defaults to %q, want %q", flag, f.DefValue, want)
		}
	}
}

// noopStream is an Anthropic stream with one Noop call.
const noopStream = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_noop\",\"name\":\"Noop\",\"input\":{}}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"via\\\":\\\"proxy\\\"}\"}}\n\n" +
	"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
	"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// TestProxyCommandServes runs the command against a pipeline on a TCP
// NATS server: a stream passes through and its call runs; SIGINT (the
// context) stops it cleanly.
func TestProxyCommandServes(t *testing.T) {
	srv, err := embedded.Start(embedded.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...)})
	cl := testenv.Client(t, srv)

	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"not found"}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, noopStream)
	}))
	defer up.Close()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := newProxy()
	cmd.SetArgs([]string{"--listen", addr, "--upstream", up.URL, "--format", "anthropic", "--nats", srv.ClientURL()})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	exited := make(chan error, 1)
	go func() { exited <- cmd.ExecuteContext(ctx) }()

	post := func(path, turn string) *http.Response {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+path, strings.NewReader(`{"stream":true}`))
			if turn != "" {
				req.Header.Set(proxy.HeaderTurn, turn)
			}
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				return resp
			}
			select {
			case err := <-exited:
				t.Fatalf("proxy exited: %v", err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("proxy not serving on %s: %v", addr, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	resp := post("/v1/messages", "cmd-turn-1")
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(body, []byte(noopStream)) || resp.Header.Get(proxy.HeaderTurn) != "cmd-turn-1" {
		t.Fatalf("stream: %v, turn %q, body %q", err, resp.Header.Get(proxy.HeaderTurn), body)
	}
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	n := 0
	for d, err := range cl.Results(rctx, "cmd-turn-1") {
		if err != nil {
			t.Fatal(err)
		}
		if d.Done != nil {
			break
		}
		if d.Result.Name != "Noop" || d.Result.Content != `{"via":"proxy"}` {
			t.Errorf("result %+v", d.Result)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("%d results, want 1", n)
	}

	resp = post("/elsewhere", "")
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || string(body) != `{"error":"not found"}` || resp.Header.Get(proxy.HeaderTurn) == "" {
		t.Errorf("pass-through: status %d, body %q, turn %q", resp.StatusCode, body, resp.Header.Get(proxy.HeaderTurn))
	}

	cancel()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("proxy exited with %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("proxy did not stop")
	}
}
