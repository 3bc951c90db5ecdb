package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool/testtools"
)

// rejectTurn publishes a turn whose every call the router must answer
// itself: an unknown tool, input that does not validate, an incomplete
// call, and argument text that does not parse.
func rejectTurn(t *testing.T, ctx context.Context, js jetstream.JetStream, turn string) int {
	publishUse(t, ctx, js, turn, &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_0", Name: "Frobnicate", Input: schemas.RawJSON(`{"x":1}`), Complete: true})
	publishUse(t, ctx, js, turn, &schemas.ToolUse{Seq: 1, ToolUseID: "toolu_1", Name: "Sleep", Input: schemas.RawJSON(`{"ms":"abc"}`), Complete: true})
	publishUse(t, ctx, js, turn, &schemas.ToolUse{Seq: 2, ToolUseID: "toolu_2", Name: "Sleep", RawInput: `{"ms": 10, "sa`, Complete: false})
	publishUse(t, ctx, js, turn, &schemas.ToolUse{Seq: 3, ToolUseID: "toolu_3", Name: "Sleep", RawInput: `{"ms": 10}`, Complete: false, Error: "max_tokens reached"})
	publishUse(t, ctx, js, turn, &schemas.ToolUse{Seq: 4, ToolUseID: "toolu_4", Name: "Sleep", Input: schemas.RawJSON(`{"ms":1,"bogus":true}`), Complete: true})
	publishEnd(t, ctx, js, turn, 5)
	return 5
}

func checkRejected(t *testing.T, results []*schemas.ToolResult) {
	t.Helper()
	if len(results) != 5 {
		t.Fatalf("%d results, want 5", len(results))
	}
	for i, r := range results {
		if !r.IsError || r.Worker != "router" || r.Attempt != 0 || r.ToolUseID != fmt.Sprintf("toolu_%d", i) {
			t.Errorf("result %d: %+v", i, r)
		}
		if !strings.HasPrefix(r.Content, "<tool_use_error>") {
			t.Errorf("result %d is not a wrapped error: %q", i, r.Content)
		}
		t.Logf("result %d: %s", i, r.Content)
	}
	if c := results[0].Content; !strings.Contains(c, "No such tool available: Frobnicate") {
		t.Errorf("unknown tool: %q", c)
	}
	if c := results[1].Content; !strings.Contains(c, "/ms") || !strings.Contains(c, "integer") {
		t.Errorf("invalid input: %q does not name the path /ms and what was expected", c)
	}
	for _, i := range []int{2, 3} {
		if c := results[i].Content; !strings.Contains(c, "incomplete") {
			t.Errorf("incomplete call %d: %q", i, c)
		}
	}
	if c := results[3].Content; !strings.Contains(c, "max_tokens reached") {
		t.Errorf("incomplete call 3 does not carry the adapter's reason: %q", c)
	}
	if c := results[4].Content; !strings.Contains(c, "bogus") {
		t.Errorf("additional property: %q does not name it", c)
	}
}

// TestRejectedCallsNotDispatched: with no executor at all, a turn made only
// of calls the router rejects still completes, and nothing reaches TW_EXEC.
func TestRejectedCallsNotDispatched(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...), Executors: -1})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const turn = "rej_only"
	n := rejectTurn(t, ctx, js, turn)
	results, done, err := readTurn(ctx, cl, turn)
	if err != nil {
		t.Fatalf("%v (%d results)", err, len(results))
	}
	if done.Results != n {
		t.Fatalf("turn_done %d, want %d", done.Results, n)
	}
	checkRejected(t, results)

	s, err := js.Stream(ctx, sp.ExecStream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 || info.State.LastSeq != 0 {
		t.Errorf("TW_EXEC holds %d messages (last seq %d); rejected calls must not be dispatched", info.State.Msgs, info.State.LastSeq)
	}
	// Every call is done in the lease, so no executor would wait on them.
	store, err := lease.NewStore(ctx, js, sp, 0)
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := store.Get(ctx, tenant, turn)
	if err != nil {
		t.Fatal(err)
	}
	if !lease.Complete(l) {
		t.Errorf("lease not complete: %+v", l)
	}
}

// TestRejectedCallsBetweenRunnableOnes: rejected calls sit between calls
// that run; the turn keeps its order, only the runnable calls are
// dispatched, and the unsafe call after a rejected one is not held up.
func TestRejectedCallsBetweenRunnableOnes(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...)})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const turn = "rej_mixed"
	calls := []client.Call{
		{ID: "c0", Name: "Noop", Input: json.RawMessage(`{"a":1}`)},
		{ID: "c1", Name: "Nope", Input: json.RawMessage(`{}`)},
		{ID: "c2", Name: "Sleep", Input: json.RawMessage(`{"ms":"abc"}`)},
		{ID: "c3", Name: "Sleep", Input: json.RawMessage(`{"ms":"20"}`)}, // coerced to 20
		{ID: "c4", Name: "Sleep", Input: json.RawMessage(`{"ms":-5}`)},
		{ID: "c5", Name: "Noop", Input: json.RawMessage(`{"b":2}`)},
	}
	if err := cl.SubmitCalls(ctx, turn, calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	results, done, err := readTurn(ctx, cl, turn)
	if err != nil {
		t.Fatalf("%v (%d results)", err, len(results))
	}
	if done.Results != len(calls) {
		t.Fatalf("turn_done %d", done.Results)
	}
	want := []struct {
		isErr   bool
		worker  string
		content string
	}{
		{false, "exec", `{"a":1}`},
		{true, "router", "No such tool available: Nope"},
		{true, "router", "/ms"},
		{false, "exec", "slept 20 ms"},
		{true, "router", "/ms"},
		{false, "exec", `{"b":2}`},
	}
	for i, w := range want {
		r := results[i]
		isRouter := r.Worker == "router"
		if r.IsError != w.isErr || isRouter != (w.worker == "router") || !strings.Contains(r.Content, w.content) {
			t.Errorf("result %d: %+v, want is_error=%v by %s containing %q", i, r, w.isErr, w.worker, w.content)
		}
	}
	s, err := js.Stream(ctx, sp.ExecStream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.LastSeq != 3 {
		t.Errorf("TW_EXEC received %d dispatches, want 3 (only the runnable calls)", info.State.LastSeq)
	}
}
