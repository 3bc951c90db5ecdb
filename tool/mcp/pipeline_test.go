package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
)

// runTurn submits calls as one turn and returns the results in call order.
func runTurn(t *testing.T, cl *client.Client, turn string, calls []client.Call) []*schemas.ToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.SubmitCalls(ctx, turn, calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	var out []*schemas.ToolResult
	for d, err := range cl.Results(ctx, turn) {
		if err != nil {
			t.Fatal(err)
		}
		if d.Done != nil {
			break
		}
		out = append(out, d.Result)
	}
	if len(out) != len(calls) {
		t.Fatalf("%d results for %d calls", len(out), len(calls))
	}
	return out
}

func overlap(a, b *schemas.ToolResult) bool {
	return a.StartedAt.Before(b.FinishedAt) && b.StartedAt.Before(a.FinishedAt)
}

// TestPipelineScheduling is the acceptance test: an MCP server written in
// Go, started over stdio, serves a read-only and a destructive tool;
// through the full pipeline (two executors) the read-only calls run in
// parallel and the destructive one alone.
func TestPipelineScheduling(t *testing.T) {
	bin := testServer(t)
	wipeLog := filepath.Join(t.TempDir(), "wipe.log")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Connect(ctx, ServerConfig{Name: "tsrv", Command: bin, Env: []string{"TESTSERVER_WIPE_LOG=" + wipeLog}}, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	srv := testenv.Server(t)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, s.Tools()...), Executors: 2})
	cl := testenv.Client(t, srv)

	in := func(s string) json.RawMessage { return json.RawMessage(s) }
	calls := []client.Call{
		{ID: "toolu_1", Name: "mcp__tsrv__lookup", Input: in(`{"key":"a","ms":500}`)},
		{ID: "toolu_2", Name: "mcp__tsrv__lookup", Input: in(`{"key":"b","ms":500}`)},
		{ID: "toolu_3", Name: "mcp__tsrv__lookup", Input: in(`{"key":"c","ms":500}`)},
		{ID: "toolu_4", Name: "mcp__tsrv__wipe", Input: in(`{"ms":300}`)},
		{ID: "toolu_5", Name: "mcp__tsrv__lookup", Input: in(`{"key":"d","ms":200}`)},
	}
	rs := runTurn(t, cl, "turn_mcp_sched", calls)
	for i, r := range rs {
		t.Logf("%s %s %s → %s (%s) worker %s error %v: %q", r.ToolUseID, r.Name,
			r.StartedAt.Format("15:04:05.000"), r.FinishedAt.Format("15:04:05.000"), r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond), r.Worker, r.IsError, r.Content)
		if r.IsError || r.Seq != i {
			t.Errorf("result %d: %+v", i, r)
		}
	}
	for i, key := range []string{"a", "b", "c"} {
		if want := "lookup " + key + ": found"; rs[i].Content != want {
			t.Errorf("result %d: %q, want %q", i, rs[i].Content, want)
		}
	}
	if rs[3].Content != "wiped" || rs[4].Content != "lookup d: found" {
		t.Errorf("contents %q, %q", rs[3].Content, rs[4].Content)
	}
	// The three read-only calls ran together: every pair overlaps.
	for i := range 3 {
		for j := i + 1; j < 3; j++ {
			if !overlap(rs[i], rs[j]) {
				t.Errorf("lookups %d and %d did not overlap", i, j)
			}
		}
	}
	// The destructive call ran alone: it overlaps nothing.
	for i, r := range rs {
		if i != 3 && overlap(r, rs[3]) {
			t.Errorf("wipe overlapped call %d", i)
		}
	}
	if !rs[3].StartedAt.After(rs[2].FinishedAt) || !rs[4].StartedAt.After(rs[3].FinishedAt) {
		t.Error("wipe did not run between the lookups")
	}
	b, err := os.ReadFile(wipeLog)
	if err != nil || string(b) != "wipe 300\n" {
		t.Errorf("wipe log %q (%v)", b, err)
	}
}

// TestPipelineCrash: a crash mid-call reaches the agent as an error result
// naming the server; a call in a later turn succeeds after the restart.
func TestPipelineCrash(t *testing.T) {
	s := connect(t, "tsrv")
	srv := testenv.Server(t)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, s.Tools()...), Executors: 2})
	cl := testenv.Client(t, srv)

	rs := runTurn(t, cl, "turn_mcp_crash", []client.Call{
		{ID: "toolu_1", Name: "mcp__tsrv__crash", Input: json.RawMessage(`{"ms":200}`)},
	})
	if !rs[0].IsError || !strings.Contains(rs[0].Content, "MCP server tsrv stopped while the call was running (exit status 1") {
		t.Errorf("crash result: %+v", rs[0])
	}
	rs = runTurn(t, cl, "turn_mcp_after", []client.Call{
		{ID: "toolu_1", Name: "mcp__tsrv__lookup", Input: json.RawMessage(`{"key":"z"}`)},
	})
	if rs[0].IsError || rs[0].Content != "lookup z: found" {
		t.Errorf("after the restart: %+v", rs[0])
	}
}
