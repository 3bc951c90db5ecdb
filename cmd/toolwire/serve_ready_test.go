package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/subjects"
)

// TestServeReadyAndMCPMetrics runs `toolwire serve` with an MCP server and
// kills the server's process while it cannot start again: its gauge goes
// to 0 and /readyz to 503 naming it; once it can start, it is restarted,
// counted, and the process is ready again. A turn whose calls wait for
// each other moves the call and lease metrics.
func TestServeReadyAndMCPMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary and an MCP server")
	}
	dir := t.TempDir()
	starts, marker := filepath.Join(dir, "starts"), filepath.Join(dir, "refuse")
	servers, _ := json.Marshal([]map[string]any{{
		"name": "tsrv", "command": sharedTestServer(t),
		"env": []string{"TESTSERVER_STARTS=" + starts, "TESTSERVER_REFUSE_IF=" + marker, "TESTSERVER_WIPE_LOG=" + filepath.Join(dir, "wipe.log")},
	}})
	cfg := writeTemp(t, "toolwire.json", `{"tool_search": "off", "mcp_servers": `+string(servers)+`}`)
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	base := "http://127.0.0.1:" + strconv.Itoa(freePort(t))
	p := startToolwire(t, "serve", "--config", cfg, "--listen", addr, "--http", strings.TrimPrefix(base, "http://"), "--api", "",
		"--store", filepath.Join(dir, "data"), "--test-tools", "--workdir", dir)
	p.waitLine(t, "toolwire serving", 60*time.Second)
	go func() {
		for range p.lines { // keep its output flowing
		}
	}()
	until := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				_, m := get(t, base+"/metrics")
				_, r := get(t, base+"/readyz")
				t.Fatalf("not %s after 30s; /readyz: %s\n%s\n%s", what, r, grepLines(m, "toolwire_"), p.out())
			}
		}
	}
	has := func(lines ...string) func() bool {
		return func() bool {
			_, m := get(t, base+"/metrics")
			for _, l := range lines {
				if !strings.Contains(m, l+"\n") {
					return false
				}
			}
			return true
		}
	}
	ready := func(want int, says string) func() bool {
		return func() bool {
			code, body := get(t, base+"/readyz")
			return code == want && strings.Contains(body, says)
		}
	}
	until("ready", ready(http.StatusOK, "ready"))

	nc, err := nats.Connect("nats://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cl, err := client.New(nc, client.Config{Space: subjects.Default()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sleep := json.RawMessage(`{"ms":200,"safe":true}`)
	if err := cl.SubmitCalls(ctx, "waits", []client.Call{{ID: "a", Name: "Sleep", Input: sleep}, {ID: "b", Name: "Sleep", Input: sleep}},
		client.TurnOptions{MaxConcurrency: 1}); err != nil {
		t.Fatal(err)
	}
	for d, err := range cl.Results(ctx, "waits") {
		if err != nil {
			t.Fatal(err)
		}
		if d.Done != nil {
			break
		}
	}
	until("the turn's and the server's series", has(
		`toolwire_calls_started_total{tenant="default",tool="Sleep"} 2`,
		`toolwire_lease_wait_seconds_count{tool="Sleep"} 1`,
		`toolwire_parked_calls{tenant="default"} 0`,
		`toolwire_mcp_server_up{server="tsrv"} 1`,
		`toolwire_mcp_restarts_total{server="tsrv"} 0`,
	))

	// The server dies and cannot start again for now.
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(starts)
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(string(b)), "start "))
	if err != nil {
		t.Fatalf("the server's pid: %q: %v", b, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	until("down", has(`toolwire_mcp_server_up{server="tsrv"} 0`))
	until("unready naming the server", ready(http.StatusServiceUnavailable, "MCP server tsrv is not running"))

	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	until("restarted", has(`toolwire_mcp_server_up{server="tsrv"} 1`, `toolwire_mcp_restarts_total{server="tsrv"} 1`))
	until("ready again", ready(http.StatusOK, "ready"))

	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.wait(t, 30*time.Second); err != nil {
		t.Errorf("serve after SIGTERM: %v\n%s", err, p.out())
	}
}

// get fetches url: its status and body (0 and the error when it fails).
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
