package client_test

import (
	"fmt"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/pipeline"
)

// TestResultsInCallOrder: calls that finish in another order than the
// model wrote them come back in call order, each exactly once, then
// turn_done, and the iterator stops there.
func TestResultsInCallOrder(t *testing.T) {
	_, cl := env(t, pipeline.Config{})
	ctx := testCtx(t)
	// Safe calls run together: the long sleep first finishes last.
	calls := []client.Call{
		{ID: "a", Name: "Sleep", Input: []byte(`{"ms":400,"safe":true}`)},
		noop("b", `{"x": 1}`),
		{ID: "c", Name: "Sleep", Input: []byte(`{"ms":100,"safe":true}`)},
		noop("d", `{"x": 3}`),
	}
	if err := cl.SubmitCalls(ctx, "order", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	results, _ := readTurn(t, ctx, cl, "order")
	want := []string{"slept 400 ms", `{"x":1}`, "slept 100 ms", `{"x":3}`}
	if len(results) != len(want) {
		t.Fatalf("%d results, want %d", len(results), len(want))
	}
	for i, r := range results {
		if r.Content != want[i] || r.IsError || r.ToolUseID != calls[i].ID || r.Name != calls[i].Name {
			t.Errorf("result %d: %+v; want %s %s: %q", i, *r, calls[i].ID, calls[i].Name, want[i])
		}
	}
}

// TestResultsCatchUp: Results called after some of a turn's results are
// stored reads those from the stream, then follows the rest live.
func TestResultsCatchUp(t *testing.T) {
	g := newGate()
	srv, cl := env(t, pipeline.Config{}, g.tool())
	ctx := testCtx(t)
	calls := []client.Call{noop("a", `{"x":0}`), noop("b", `{"x":1}`), {ID: "c", Name: "Gate"}}
	if err := cl.SubmitCalls(ctx, "catchup", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	g.waitStarted(t, ctx)
	// The Gate call runs after the two Noops are done: their results are
	// stored once the out subject holds them.
	waitStored(t, ctx, srv, "catchup", 2)

	var got []string
	for d, err := range cl.Results(ctx, "catchup") {
		if err != nil {
			t.Fatal(err)
		}
		if d.Done != nil {
			if d.Done.Results != 3 {
				t.Errorf("turn_done counts %d results", d.Done.Results)
			}
			break
		}
		got = append(got, fmt.Sprintf("%d %s", d.Result.Seq, d.Result.Content))
		if d.Result.Seq == 1 {
			close(g.open) // only now can the last result exist
		}
	}
	want := []string{`0 {"x":0}`, `1 {"x":1}`, `2 the gate opened`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("results %q, want %q", got, want)
	}
}

// TestResultsOfAFinishedTurn: a turn whose results and turn_done are all
// stored reads back whole from the stream, as often as asked.
func TestResultsOfAFinishedTurn(t *testing.T) {
	srv, cl := env(t, pipeline.Config{})
	ctx := testCtx(t)
	if err := cl.SubmitCalls(ctx, "finished", []client.Call{noop("a", `{"x":0}`), noop("b", `{"x":1}`)}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStored(t, ctx, srv, "finished", 2) // the second result ends the turn
	for range 2 {
		results, _ := readTurn(t, ctx, cl, "finished")
		if len(results) != 2 || results[0].Content != `{"x":0}` || results[1].Content != `{"x":1}` {
			t.Fatalf("results %+v", results)
		}
	}
}
