package client_test

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/modelstream/anthropic"
	"github.com/toolwire/toolwire/pipeline"
)

// TestSubmitStream: a model's Anthropic stream, read by the real parser,
// becomes a turn: the summary says what the stream held, and each call's
// result answers the call the model made, under its id.
func TestSubmitStream(t *testing.T) {
	_, cl := env(t, pipeline.Config{})
	ctx := testCtx(t)
	stream := testenv.AnthropicStream("msg_1",
		testenv.ToolBlock{ID: "toolu_a", Name: "Noop", Args: `{"x": 0}`},
		testenv.ToolBlock{ID: "toolu_b", Name: "Sleep", Args: `{"ms": 1}`},
	)
	sum, err := cl.SubmitStream(ctx, "stream", anthropic.New(), strings.NewReader(stream), client.TurnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Calls != 2 || sum.StopReason != "tool_use" || sum.Err != "" || !sum.Ended || len(sum.Uses) != 2 {
		t.Fatalf("summary %+v", sum)
	}
	if sum.StartedAt.IsZero() || sum.EndedAt.Before(sum.StartedAt) {
		t.Errorf("summary times: started %v, ended %v", sum.StartedAt, sum.EndedAt)
	}
	for i, id := range []string{"toolu_a", "toolu_b"} {
		if u := sum.Uses[i]; u.Seq != i || u.ID != id || !u.Complete {
			t.Errorf("use %d: %+v", i, u)
		}
	}
	results, _ := readTurn(t, ctx, cl, "stream")
	if len(results) != 2 {
		t.Fatalf("%d results", len(results))
	}
	if r := results[0]; r.ToolUseID != "toolu_a" || r.Content != `{"x":0}` || r.IsError {
		t.Errorf("Noop's result: %+v", *r)
	}
	if r := results[1]; r.ToolUseID != "toolu_b" || r.Content != "slept 1 ms" || r.IsError {
		t.Errorf("Sleep's result: %+v", *r)
	}
}

// TestSubmitCallAndEndTurn: an adapter of its own sends calls one by one,
// in any order, and says at the end how many there were; the turn reads
// back in call order, and a call sent without an id gets one.
func TestSubmitCallAndEndTurn(t *testing.T) {
	_, cl := env(t, pipeline.Config{})
	ctx := testCtx(t)
	if err := cl.SubmitCall(ctx, "bycall", 1, noop("", `{"x":1}`), client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cl.SubmitCall(ctx, "bycall", 0, noop("call_0", `{"x":0}`), client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTurn(ctx, "bycall", 2, "tool_use"); err != nil {
		t.Fatal(err)
	}
	results, _ := readTurn(t, ctx, cl, "bycall")
	if len(results) != 2 || results[0].Content != `{"x":0}` || results[1].Content != `{"x":1}` {
		t.Fatalf("results %+v", results)
	}
	if results[0].ToolUseID != "call_0" || results[1].ToolUseID == "" {
		t.Errorf("ids %q, %q", results[0].ToolUseID, results[1].ToolUseID)
	}
}

// TestSubmitCallsEmptyInput: a call with no input runs with an empty
// object, as a model's call with no arguments does.
func TestSubmitCallsEmptyInput(t *testing.T) {
	_, cl := env(t, pipeline.Config{})
	ctx := testCtx(t)
	if err := cl.SubmitCalls(ctx, "empty", []client.Call{{ID: "a", Name: "Noop"}}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	if results, _ := readTurn(t, ctx, cl, "empty"); results[0].Content != `{}` || results[0].IsError {
		t.Errorf("result %+v", *results[0])
	}
}
