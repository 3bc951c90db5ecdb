package executor_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/testtools"
)

// TestPoisonDispatchDeadLettered: messages on a pool's work queue that are
// not dispatch events are terminated and copied to tw.default.dlq.executor
// with their reason; the workers go on and a good turn completes.
func TestPoisonDispatchDeadLettered(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...), Executors: 2})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	type poison struct {
		turn   string
		h      nats.Header
		body   []byte
		reason string
	}
	h, _ := encode(t, "x_garbage", -1, &schemas.Dispatch{Seq: 0, ToolUseID: "toolu_x", Tool: "Noop", Input: schemas.RawJSON(`{}`), Pool: "default"})
	ps := []poison{
		{"x_garbage", h, []byte("\xc1\xc1\xc1 definitely not msgpack"), "msgpack"},
		{"x_bare", nats.Header{}, []byte("hello executor"), "ce-specversion"},
	}
	h, body := encode(t, "x_typed", -1, &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_x", Name: "Noop", Input: schemas.RawJSON(`{}`), Complete: true})
	ps = append(ps, poison{"x_typed", h, body, "not a dispatch event"})
	h, _ = encode(t, "x_json", -1, &schemas.Dispatch{Seq: 0, ToolUseID: "toolu_x", Tool: "Noop", Input: schemas.RawJSON(`{}`), Pool: "default"})
	h.Set("ce-datacontenttype", schemas.ContentJSON)
	ps = append(ps, poison{"x_json", h, []byte(`{"seq":0,"tool_use_id":"toolu_x","tool":"Noop","input":{}}`), "pool"})
	for _, p := range ps {
		publish(t, ctx, js, sp.Exec(tenant, subjects.DefaultPool, p.turn), p.h, p.body)
	}

	calls := []client.Call{
		{ID: "a", Name: "Noop", Input: json.RawMessage(`{"a":1}`)},
		{ID: "b", Name: "Sleep", Input: json.RawMessage(`{"ms":5}`)},
		{ID: "c", Name: "Noop", Input: json.RawMessage(`{"c":3}`)},
	}
	if err := cl.SubmitCalls(ctx, "x_good", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	results, done, err := readTurn(ctx, cl, "x_good")
	if err != nil {
		t.Fatalf("good turn after the poison: %v (%d results)", err, len(results))
	}
	if done.Results != 3 {
		t.Fatalf("turn_done %d", done.Results)
	}
	for _, r := range results {
		if r.IsError {
			t.Errorf("result %d: %s", r.Seq, r.Content)
		}
	}

	dlqSubject := sp.DLQ(tenant, subjects.StageExecutor)
	var dl []*jetstream.RawStreamMsg
	waitFor(t, 10*time.Second, "the dead letters on "+dlqSubject, func() bool {
		dl = subjectMsgs(t, ctx, js, sp.DLQStream(), dlqSubject)
		return len(dl) >= len(ps)
	})
	if len(dl) != len(ps) {
		t.Errorf("%d dead letters for %d poison messages", len(dl), len(ps))
	}
	bySubject := map[string]*jetstream.RawStreamMsg{}
	for _, m := range dl {
		bySubject[m.Header.Get(schemas.HeaderDLQSubject)] = m
	}
	for _, p := range ps {
		m, ok := bySubject[sp.Exec(tenant, subjects.DefaultPool, p.turn)]
		if !ok {
			t.Errorf("%s: no dead letter", p.turn)
			continue
		}
		reason := m.Header.Get(schemas.HeaderDLQReason)
		t.Logf("%s: %s", p.turn, reason)
		if !strings.Contains(reason, p.reason) {
			t.Errorf("%s: reason %q does not mention %q", p.turn, reason, p.reason)
		}
		if m.Header.Get(schemas.HeaderDLQStage) != subjects.StageExecutor || string(m.Data) != string(p.body) {
			t.Errorf("%s: dead letter %v %q", p.turn, m.Header, m.Data)
		}
	}
	// The work queue is empty: poison is terminated, not left to redeliver.
	s, err := js.Stream(ctx, sp.ExecStream())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "an empty work queue", func() bool {
		info, err := s.Info(ctx)
		return err == nil && info.State.Msgs == 0
	})
}

// TestPoisonDispatchWithSeqAnswered: a dispatch that does not decode but
// whose ce-seq names the call gets an error result, so its turn (routed
// otherwise as usual) completes with one result per call.
func TestPoisonDispatchWithSeqAnswered(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...)})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const turn = "x_seq"
	// Call 1 reaches the pool as garbage (a broken router, a corrupted
	// message) after the router has registered the turn; calls 0 and 2 go
	// through the router as usual.
	publishUse(t, ctx, js, turn, &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_0", Name: "Noop", Input: schemas.RawJSON(`{"n":0}`), Complete: true})
	publishEnd(t, ctx, js, turn, 3)
	store := mustStore(t, ctx, srv)
	waitFor(t, 10*time.Second, "the turn's lease", func() bool {
		l, _, err := store.Get(ctx, tenant, turn)
		return err == nil && l.Total == 3
	})
	h, _ := encode(t, turn, 1, &schemas.Dispatch{Seq: 1, ToolUseID: "toolu_1", Tool: "Noop", Input: schemas.RawJSON(`{}`), Pool: "default"})
	publish(t, ctx, js, sp.Exec(tenant, subjects.DefaultPool, turn), h, []byte{0xc1})
	publishUse(t, ctx, js, turn, &schemas.ToolUse{Seq: 2, ToolUseID: "toolu_2", Name: "Sleep", Input: schemas.RawJSON(`{"ms":1}`), Complete: true})

	results, done, err := readTurn(ctx, cl, turn)
	if err != nil {
		t.Fatalf("%v (%d results)", err, len(results))
	}
	if done.Results != 3 {
		t.Fatalf("turn_done %d", done.Results)
	}
	if results[0].IsError || results[2].IsError {
		t.Errorf("good calls: %+v %+v", results[0], results[2])
	}
	if r := results[1]; !r.IsError || !strings.Contains(r.Content, "Tool call not executed: malformed dispatch event") {
		t.Errorf("malformed call: %+v", r)
	}
	if dl := subjectMsgs(t, ctx, js, sp.DLQStream(), sp.DLQ(tenant, subjects.StageExecutor)); len(dl) != 1 {
		t.Errorf("%d dead letters, want 1", len(dl))
	}
}

// TestPoisonDispatchBeforeLease: the same malformed dispatch, handled before
// the router has created the turn's lease. Its error result is published,
// but the lease must also record the call as done, or every later unsafe
// call of the turn waits for it for ever.
func TestPoisonDispatchBeforeLease(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...)})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const turn = "x_early"
	h, _ := encode(t, turn, 1, &schemas.Dispatch{Seq: 1, ToolUseID: "toolu_1", Tool: "Noop", Input: schemas.RawJSON(`{}`), Pool: "default"})
	publish(t, ctx, js, sp.Exec(tenant, subjects.DefaultPool, turn), h, []byte{0xc1})
	rs, err := js.Stream(ctx, sp.ResultStream())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the error result of the malformed call", func() bool {
		_, err := rs.GetLastMsgForSubject(ctx, sp.Result(tenant, turn, 1))
		return err == nil
	})
	publishUse(t, ctx, js, turn, &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_0", Name: "Noop", Input: schemas.RawJSON(`{"n":0}`), Complete: true})
	publishUse(t, ctx, js, turn, &schemas.ToolUse{Seq: 2, ToolUseID: "toolu_2", Name: "Sleep", Input: schemas.RawJSON(`{"ms":1}`), Complete: true})
	publishEnd(t, ctx, js, turn, 3)

	rctx, rcancel := context.WithTimeout(ctx, 8*time.Second)
	defer rcancel()
	results, _, err := readTurn(rctx, cl, turn)
	if err != nil {
		l, _, lerr := mustStore(t, ctx, srv).Get(ctx, tenant, turn)
		t.Fatalf("%v (%d results); lease %+v %v", err, len(results), l, lerr)
	}
}
