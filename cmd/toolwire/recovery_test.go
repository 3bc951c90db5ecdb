package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// TestKilledWorkerCallsRecoverFast: an executor process is killed with
// SIGKILL while one of its calls runs (a Bash command that writes, so it
// must not run twice) and another of the same turn is parked behind it.
// Within seconds the running call is answered "outcome unknown" — the
// claim's deadline and the message's ack wait are short (2 s) and renewed
// while the worker lives, not left at 30 s — and the parked call, as a
// sibling of a failed Bash call, is cancelled. The shell dies with its
// worker, so the rest of the command never writes after the agent was
// told "outcome unknown".
func TestKilledWorkerCallsRecoverFast(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	turn := client.NewTurnID()
	calls := []client.Call{bash("toolu_long", "sleep 4 && touch long_done"), bash("toolu_next", "echo after")}
	if err := c.cl.SubmitCalls(ctx, turn, calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	store := testenv.Store(t, ctx, c.srv)
	var worker string
	testenv.WaitFor(t, 20*time.Second, "the long call to run", func() bool {
		l, _, err := store.Get(ctx, subjects.DefaultTenant, turn)
		if err != nil {
			return false
		}
		if lc := l.Peek(0); lc != nil && lc.State == schemas.CallRunning {
			worker = lc.Worker
		}
		return worker != ""
	})
	killed := false
	for _, p := range c.procs {
		if strings.Contains(worker, "-"+strconv.Itoa(p.Process.Pid)+"-") {
			if err := p.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = p.Wait()
			killed = true
		}
	}
	if !killed {
		t.Fatalf("no executor process is worker %s", worker)
	}
	at := time.Now()
	results := c.collect(t, ctx, turn)
	took := time.Since(at)
	t.Logf("recovered %v after the kill", took.Round(time.Millisecond))
	if len(results) != 2 || !results[0].IsError || !strings.Contains(results[0].Content, "outcome unknown") ||
		!results[1].IsError || !strings.Contains(results[1].Content, "Cancelled: parallel tool call Bash(sleep 4") {
		t.Fatalf("results %s", describe(results))
	}
	// Generous: the machine is shared. Before, it took the 30 s ack wait.
	if took > 15*time.Second {
		t.Errorf("recovery took %v", took)
	}
	// Past the time the command would have written.
	time.Sleep(time.Until(at.Add(6 * time.Second)))
	if _, err := os.Stat(filepath.Join(c.workdir, "long_done")); err == nil {
		t.Error("the killed worker's command wrote after its call was answered")
	}
	l, _, err := store.Get(ctx, subjects.DefaultTenant, turn)
	if err == nil && !lease.Complete(l) {
		t.Errorf("lease not complete: %+v", l)
	}
}

func describe(rs []*schemas.ToolResult) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "[%d %v %q] ", r.Seq, r.IsError, r.Content)
	}
	return b.String()
}
