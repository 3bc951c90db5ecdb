package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/testtools"
)

// TestTurnCountedOnItsCalls: a turn whose calls carry its count
// (ToolUse.Calls) completes with no turn_end and no end marker, whatever
// answers its calls — the executor, the router's rejection of an unknown
// tool or an incomplete call, or a cancel that came first — and every
// result carries the count. A call past the count is late, as after a
// turn_end.
func TestTurnCountedOnItsCalls(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...)})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	use := func(seq, calls int, name string) *schemas.ToolUse {
		return &schemas.ToolUse{Seq: seq, ToolUseID: fmt.Sprintf("toolu_%d", seq), Name: name, Input: schemas.RawJSON(`{}`), Complete: true, Calls: calls}
	}
	markers := map[string]func() int{}
	for _, turn := range []string{"mixed", "cancelled", "late"} {
		got := published(t, js, sp.ResultEnd(tenant, turn))
		markers[turn] = func() int { return len(got()) }
	}

	incomplete := use(2, 3, "Noop")
	incomplete.Complete, incomplete.Input, incomplete.Error = false, nil, "stream cut"
	publishUse(t, ctx, js, "mixed", use(0, 3, "Noop"))
	publishUse(t, ctx, js, "mixed", use(1, 3, "NoSuchTool"))
	publishUse(t, ctx, js, "mixed", incomplete)

	h, body := encode(t, "cancelled", -1, &schemas.TurnCancel{Reason: "user"})
	publish(t, ctx, js, sp.In(tenant, "cancelled", subjects.KindCancel), h, body)
	waitFor(t, 10*time.Second, "the cancel in the lease", func() bool {
		l, _, err := mustStore(t, ctx, srv).Get(ctx, tenant, "cancelled")
		return err == nil && l.Cancelled
	})
	publishUse(t, ctx, js, "cancelled", use(0, 2, "Noop"))
	publishUse(t, ctx, js, "cancelled", use(1, 2, "Noop"))

	publishUse(t, ctx, js, "late", use(0, 1, "Noop"))
	results, done, err := readTurn(ctx, cl, "late")
	if err != nil || done.Results != 1 || len(results) != 1 {
		t.Fatalf("turn late: %v, %d results, done %+v", err, len(results), done)
	}
	publishUse(t, ctx, js, "late", use(1, 0, "Noop"))

	for turn, want := range map[string][]bool{"mixed": {false, true, true}, "cancelled": {true, true}, "late": {false}} {
		results, done, err := readTurn(ctx, cl, turn)
		if err != nil || done.Results != len(want) || len(results) != len(want) {
			t.Errorf("turn %s: %v, %d results, done %+v; want %d", turn, err, len(results), done, len(want))
			continue
		}
		for i, r := range results {
			if r.IsError != want[i] || r.TurnCalls != len(want) {
				t.Errorf("turn %s: result %d is_error %v turn_calls %d (%q); want %v, %d", turn, i, r.IsError, r.TurnCalls, r.Content, want[i], len(want))
			}
		}
		if n := markers[turn](); n != 0 {
			t.Errorf("turn %s: %d end markers, want none", turn, n)
		}
	}
	waitFor(t, 10*time.Second, "the late call's dead letter", func() bool {
		return len(subjectMsgs(t, ctx, js, sp.DLQStream(), sp.DLQ(tenant, subjects.StageRouter))) == 1
	})
}

// TestCountedTurnClosesWhenItsCallsFail: a turn whose calls carry its
// count completes even when the router can use none of them as sent: a
// call over a limit is answered with the count it carries (cut to the
// calls-per-turn limit), a call whose data does not decode still gives
// its count in the ce-calls header, and a tool_use that names no call at
// all leaves an end marker with the lease's count, so that the turn is
// filled at the gap deadline.
func TestCountedTurnClosesWhenItsCallsFail(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{
		Tools: testenv.Registry(t, testtools.Tools()...), GapDeadline: time.Second,
		Limits: schemas.Limits{MaxCallsPerTurn: 3},
	})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// More calls than the limit: the ones the limit allows are answered.
	var calls []client.Call
	for range 4 {
		calls = append(calls, client.Call{Name: "Noop", Input: json.RawMessage(`{}`)})
	}
	_ = cl.SubmitCalls(ctx, "too_many", calls, client.TurnOptions{})
	// One call whose name is over the limit.
	_ = cl.SubmitCalls(ctx, "long_name", []client.Call{{Name: strings.Repeat("x", 300), Input: json.RawMessage(`{}`)}}, client.TurnOptions{})
	// One call whose data is garbage; its headers say its seq and count.
	h, _ := encode(t, "garbage", 0, &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_0", Name: "Noop", Input: schemas.RawJSON(`{}`), Complete: true, Calls: 1})
	publish(t, ctx, js, sp.In(tenant, "garbage", subjects.KindUse), h, []byte("\xc1 garbage"))
	// The last of two calls names no call: no data, no ce-seq.
	publishUse(t, ctx, js, "lost_last", &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_0", Name: "Noop", Input: schemas.RawJSON(`{}`), Complete: true, Calls: 2})
	waitFor(t, 10*time.Second, "the first call's lease", func() bool {
		_, _, err := mustStore(t, ctx, srv).Get(ctx, tenant, "lost_last")
		return err == nil
	})
	h, _ = encode(t, "lost_last", 1, &schemas.ToolUse{Seq: 1, ToolUseID: "toolu_1", Name: "Noop", Input: schemas.RawJSON(`{}`), Complete: true, Calls: 2})
	h.Del("ce-seq")
	h.Del("ce-calls")
	publish(t, ctx, js, sp.In(tenant, "lost_last", subjects.KindUse), h, []byte("\xc1 garbage"))

	for turn, want := range map[string][]bool{"too_many": {true, true, true}, "long_name": {true}, "garbage": {true}, "lost_last": {false, true}} {
		rctx, rcancel := context.WithTimeout(ctx, 15*time.Second)
		results, done, err := readTurn(rctx, cl, turn)
		rcancel()
		if err != nil || done.Results != len(want) || len(results) != len(want) {
			t.Errorf("turn %s: %v, %d results, done %+v; want %d", turn, err, len(results), done, len(want))
			continue
		}
		for i, r := range results {
			if r.IsError != want[i] {
				t.Errorf("turn %s: result %d is_error %v (%q)", turn, i, r.IsError, r.Content)
			}
		}
	}
}

// TestNamelessCallBeforeTheCount: a tool_use that names no call (no data,
// no ce-seq) but whose ce-calls header gives its turn's count reaches the
// router before any call of the turn: the count is recorded then, with an
// end marker, so the turn still completes when its good call comes — the
// nameless one is answered at the gap deadline.
func TestNamelessCallBeforeTheCount(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...), GapDeadline: time.Second})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const turn = "nameless_first"
	h, _ := encode(t, turn, 1, &schemas.ToolUse{Seq: 1, ToolUseID: "toolu_1", Name: "Noop", Input: schemas.RawJSON(`{}`), Complete: true, Calls: 2})
	h.Del("ce-seq")
	publish(t, ctx, js, sp.In(tenant, turn, subjects.KindUse), h, []byte("\xc1 garbage"))
	waitFor(t, 10*time.Second, "its dead letter", func() bool {
		return len(subjectMsgs(t, ctx, js, sp.DLQStream(), sp.DLQ(tenant, subjects.StageRouter))) == 1
	})
	publishUse(t, ctx, js, turn, &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_0", Name: "Noop", Input: schemas.RawJSON(`{}`), Complete: true, Calls: 2})
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	results, done, err := readTurn(rctx, cl, turn)
	if err != nil || done.Results != 2 || len(results) != 2 || results[0].IsError || !results[1].IsError {
		t.Fatalf("turn: %v, %d results %+v, done %+v", err, len(results), results, done)
	}
}
