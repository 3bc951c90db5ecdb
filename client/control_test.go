package client_test

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/pipeline"
)

// TestCancel: a user interrupt stops the running call of a tool that
// allows it and keeps the queued call from starting; both are answered
// with the interrupt text and the turn completes.
func TestCancel(t *testing.T) {
	g := newGate()
	_, cl := env(t, pipeline.Config{}, g.tool())
	ctx := testCtx(t)
	// Gate is not concurrency-safe: the Sleep after it waits for it.
	calls := []client.Call{{ID: "a", Name: "Gate"}, {ID: "b", Name: "Sleep", Input: []byte(`{"ms":1}`)}}
	if err := cl.SubmitCalls(ctx, "cancel", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	g.waitStarted(t, ctx)
	if err := cl.Cancel(ctx, "cancel", "user pressed Esc"); err != nil {
		t.Fatal(err)
	}
	results, _ := readTurn(t, ctx, cl, "cancel")
	for _, r := range results {
		if !r.IsError || !strings.Contains(r.Content, texts.Interrupt) {
			t.Errorf("call %d (%s): %q; want the interrupt text", r.Seq, r.Name, r.Content)
		}
	}
}

// TestDiscard: discarding a turn whose stream failed stops every
// unfinished call, however long it would run, answers each with the
// discard text, and closes the turn at the calls sent, with no turn_end.
func TestDiscard(t *testing.T) {
	_, cl := env(t, pipeline.Config{})
	ctx := testCtx(t)
	calls := []client.Call{
		{ID: "a", Name: "Sleep", Input: []byte(`{"ms":600000}`)}, // ten minutes: only a stop ends it in time
		noop("b", `{"x":1}`),
	}
	for i, call := range calls {
		if err := cl.SubmitCall(ctx, "discard", i, call, client.TurnOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.Discard(ctx, "discard", "stream failed; retrying"); err != nil {
		t.Fatal(err)
	}
	results, _ := readTurn(t, ctx, cl, "discard")
	if len(results) != 2 {
		t.Fatalf("%d results, want the 2 calls sent", len(results))
	}
	for _, r := range results {
		if !strings.Contains(r.Content, texts.Discard) {
			t.Errorf("call %d (%s): %q; want the discard text", r.Seq, r.Name, r.Content)
		}
	}
}
