package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/subjects"
)

// TestBrokerRestart: the NATS server (a `toolwire serve --stages none`
// process) is killed with SIGKILL while two Bash calls run on executor
// processes, and started again from its store five seconds later. The
// stages, in processes of their own, reconnect and resubscribe by
// themselves. The call that finished while the server was away is
// answered with its real result — not "outcome unknown" by another
// worker; the one still running when its worker had been cut off for
// longer than its claim's deadline was stopped then, writes nothing
// later, and is answered "outcome unknown"; a turn submitted after the
// restart completes.
func TestBrokerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the server and stage processes, and kills the server")
	}
	bin := sharedBinary(t)
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	store := filepath.Join(t.TempDir(), "store")
	work := t.TempDir()
	var procs []*exec.Cmd
	// The stages stop first, while their server still runs: an executor
	// stopping without one retries its last writes for two minutes.
	t.Cleanup(func() {
		for _, cmd := range slices.Backward(procs) {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Signal(syscall.SIGTERM)
				_ = cmd.Wait()
			}
		}
	})
	start := func(args ...string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"serve", "--http", "", "--api", ""}, args...)...)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if args[len(args)-1] == "none" {
			procs = append([]*exec.Cmd{cmd}, procs...)
		} else {
			procs = append(procs, cmd)
		}
		return cmd
	}
	broker := start("--listen", addr, "--store", store, "--stages", "none")
	url := "nats://" + addr
	start("--nats", url, "--stages", "router,reorder", "--test-tools")
	for range 2 {
		start("--nats", url, "--stages", "executor", "--executors", "1", "--test-tools", "--workdir", work)
	}
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond), nats.RetryOnFailedConnect(true))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	waitWorkers(t, nc, 2)
	cl, err := client.New(nc, client.Config{Space: subjects.Default()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	short, long := client.NewTurnID(), client.NewTurnID()
	if err := cl.SubmitCalls(ctx, short, []client.Call{bash("toolu_short", "touch short_began && sleep 0.6 && echo finished >> during")}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cl.SubmitCalls(ctx, long, []client.Call{bash("toolu_long", "touch long_began && sleep 4 && echo late >> late")}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	// Both commands run.
	for _, f := range []string{"short_began", "long_began"} {
		for deadline := time.Now().Add(30 * time.Second); ; {
			if _, err := os.Stat(filepath.Join(work, f)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s: the command never started", f)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if err := broker.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = broker.Wait()
	killed := time.Now()
	time.Sleep(5 * time.Second) // the short command finishes while the server is away
	start("--listen", addr, "--store", store, "--stages", "none")

	results := collectAny(t, ctx, cl, short)
	if len(results) != 1 || results[0].IsError {
		t.Fatalf("the call that finished while the server was away: %s", describe(results))
	}
	if b, _ := os.ReadFile(filepath.Join(work, "during")); strings.Count(string(b), "finished") != 1 {
		t.Errorf("the command ran %d times", strings.Count(string(b), "finished"))
	}
	results = collectAny(t, ctx, cl, long)
	if len(results) != 1 || !results[0].IsError || !strings.Contains(results[0].Content, "outcome unknown") {
		t.Errorf("the call still running when its worker was cut off for longer than its claim: %s", describe(results))
	}
	time.Sleep(time.Until(killed.Add(5 * time.Second)))
	if _, err := os.Stat(filepath.Join(work, "late")); err == nil {
		t.Error("the command of a call its worker could no longer claim wrote after all")
	}
	after := client.NewTurnID()
	if err := cl.SubmitCalls(ctx, after, []client.Call{bash("toolu_after", "echo after")}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := collectAny(t, ctx, cl, after); len(got) != 1 || got[0].IsError || !strings.Contains(got[0].Content, "after") {
		t.Errorf("the turn after the restart: %s", describe(got))
	}
}
