package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/subjects"
)

// buildBinary builds toolwire into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "toolwire")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// freePort is testenv.FreePort, by the short name these tests use.
func freePort(t *testing.T) int { return testenv.FreePort(t) }

// TestServeProcess starts `toolwire serve` as a real process, runs a turn
// through it over TCP, then stops it with SIGTERM: it drains and exits 0.
func TestServeProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	httpAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	cmd := exec.Command(bin, "serve", "--listen", addr, "--http", httpAddr, "--api", "", "--store", filepath.Join(t.TempDir(), "data"), "--test-tools", "--workdir", t.TempDir())
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	}()

	var nc *nats.Conn
	deadline := time.Now().Add(30 * time.Second)
	for {
		var err error
		nc, err = nats.Connect("nats://" + addr)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not listen on %s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer nc.Close()
	cl, err := client.New(nc, client.Config{Space: subjects.Default()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	waitStreams(ctx, t, nc)
	calls := []client.Call{
		{ID: "a", Name: "Bash", Input: json.RawMessage(`{"command":"echo hello"}`)},
		{ID: "b", Name: "Noop", Input: json.RawMessage(`{"k":"v"}`)},
	}
	if err := cl.SubmitCalls(ctx, "serve_turn", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for d, err := range cl.Results(ctx, "serve_turn") {
		if err != nil {
			reportHang(t, nc, httpAddr, cmd, exited)
			t.Fatal(err)
		}
		if d.Done != nil {
			break
		}
		got = append(got, d.Result.Content)
	}
	if len(got) != 2 || got[0] != "hello" || got[1] != `{"k":"v"}` {
		t.Fatalf("results %q", got)
	}

	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		resp, err := http.Get("http://" + httpAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
		if path == "/metrics" && !strings.Contains(string(body), "toolwire_stage_messages_out_total") {
			t.Errorf("/metrics lacks the stage counters:\n%.500s", body)
		}
	}
	// The call and delivery metrics moved with the turn; a poison event
	// moves the dead-letter counter; the consumers' backlog is read.
	if err := nc.Publish(subjects.Default().In(subjects.DefaultTenant, "poison", subjects.KindUse), []byte("not an event")); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`toolwire_calls_total{outcome="routed",stage="router",tenant="default",tool="Bash"} 1`,
		`toolwire_calls_total{outcome="ok",stage="executor",tenant="default",tool="Bash"} 1`,
		`toolwire_calls_total{outcome="ok",stage="executor",tenant="default",tool="Noop"} 1`,
		`toolwire_calls_total{outcome="delivered",stage="reorder",tenant="default",tool="Noop"} 1`,
		`toolwire_call_duration_seconds_count{outcome="ok",tool="Bash"} 1`,
		`toolwire_e2e_latency_seconds_count{tenant="default"} 2`,
		`toolwire_dead_letters_total{stage="router",tenant="default"} 1`,
		`toolwire_deliveries_total{outcome="acked",stage="executor",tenant="default"} 2`,
		`toolwire_consumer_pending_messages{consumer="exec-default",stage="executor",stream="TW_EXEC"} 0`,
		`toolwire_consumer_ack_pending_messages{consumer="router",stage="router",stream="TW_IN"}`,
	}
	var metricsText string
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get("http://" + httpAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		metricsText = string(b)
		missing := ""
		for _, w := range want {
			if !strings.Contains(metricsText, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %s:\n%s", missing, grepLines(metricsText, "toolwire_"))
		}
		time.Sleep(200 * time.Millisecond)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("serve exited with %v, want 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not exit after SIGTERM")
	}
}

// grepLines keeps the lines of text that contain sub.
// waitStreams waits until the pipeline's streams exist: serve listens
// before its stages have provisioned them.
func waitStreams(ctx context.Context, t *testing.T, nc *nats.Conn) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := js.Stream(ctx, subjects.Default().OutStream()); err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatal("streams never appeared")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// reportHang logs what a turn that never finished left behind: where each
// stage's consumer stands, the stages' counters, then the goroutines of
// the serve process, which SIGQUIT has it print to its stderr (the
// test's) as it exits.
func reportHang(t *testing.T, nc *nats.Conn, httpAddr string, cmd *exec.Cmd, exited <-chan error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if resp, err := http.Get("http://" + httpAddr + "/metrics"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("counters:\n%s", grepLines(grepLines(string(b), "_total{"), "toolwire_"))
	}
	if js, err := jetstream.New(nc); err == nil {
		for info := range js.ListStreams(ctx).Info() {
			t.Logf("stream %s: %d msgs, first %d last %d", info.Config.Name, info.State.Msgs, info.State.FirstSeq, info.State.LastSeq)
			stream, err := js.Stream(ctx, info.Config.Name)
			if err != nil {
				continue
			}
			for ci := range stream.ListConsumers(ctx).Info() {
				t.Logf("  consumer %s: pending %d, ack pending %d, redelivered %d, waiting %d, delivered %d",
					ci.Name, ci.NumPending, ci.NumAckPending, ci.NumRedelivered, ci.NumWaiting, ci.Delivered.Stream)
			}
		}
	}
	_ = cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
	}
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
