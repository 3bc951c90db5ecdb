package reorder_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/testtools"
)

// garbageEnd is an end marker whose headers are right and body is not msgpack.
func garbageEnd(t *testing.T, turn string) (nats.Header, []byte) {
	h, _ := encode(t, turn, -1, &schemas.TurnEnd{Calls: 2})
	return h, []byte("\xc1 not an end marker")
}

// TestPoisonEndMarkerDeadLettered: an end marker that does not decode is
// terminated and copied to tw.default.dlq.reorder with its reason; the
// stage goes on and a good turn after it completes.
func TestPoisonEndMarkerDeadLettered(t *testing.T) {
	srv := testenv.Server(t)
	startReorders(t, srv, 2)
	cl := testenv.Client(t, srv)
	js := jsFor(t, srv, "test-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	h, body := garbageEnd(t, "bad_end")
	publish(t, ctx, js, sp.ResultEnd(tenant, "bad_end"), h, body)
	// One without any header, and one of the wrong type.
	publish(t, ctx, js, sp.ResultEnd(tenant, "bare_end"), nats.Header{}, []byte("{}"))

	for seq := range 3 {
		if err := publishResult(ctx, js, "after", seq); err != nil {
			t.Fatal(err)
		}
	}
	if err := publishEndMarker(ctx, js, "after", 3); err != nil {
		t.Fatal(err)
	}
	if err := readAll(ctx, cl, "after", 3); err != nil {
		t.Fatalf("good turn after the poison: %v", err)
	}

	dlqSubject := sp.DLQ(tenant, subjects.StageReorder)
	var dl []*jetstream.RawStreamMsg
	waitFor(t, 10*time.Second, "the dead letters on "+dlqSubject, func() bool {
		dl = subjectMsgs(t, ctx, js, sp.DLQStream(), dlqSubject)
		return len(dl) >= 2
	})
	bySubject := map[string]*jetstream.RawStreamMsg{}
	for _, m := range dl {
		bySubject[m.Header.Get(schemas.HeaderDLQSubject)] = m
		t.Logf("dead letter %s: %s", m.Header.Get(schemas.HeaderDLQSubject), m.Header.Get(schemas.HeaderDLQReason))
	}
	for turn, want := range map[string]string{"bad_end": "msgpack", "bare_end": "ce-specversion"} {
		m, ok := bySubject[sp.ResultEnd(tenant, turn)]
		if !ok {
			t.Errorf("no dead letter for the end marker of %s", turn)
			continue
		}
		if reason := m.Header.Get(schemas.HeaderDLQReason); !strings.Contains(reason, want) {
			t.Errorf("%s: reason %q does not mention %q", turn, reason, want)
		}
		if got := m.Header.Get(schemas.HeaderDLQStage); got != subjects.StageReorder {
			t.Errorf("%s: stage %q", turn, got)
		}
	}
	for _, turn := range []string{"bad_end", "bare_end"} {
		if msgs := subjectMsgs(t, ctx, js, sp.OutStream(), sp.Out(tenant, turn)); len(msgs) != 0 {
			t.Errorf("%s: %d out messages from a poisoned end marker", turn, len(msgs))
		}
	}
}

// TestPoisonEndMarkerDoesNotPinResults: a turn whose end marker is poison
// still gets its results delivered, and those results, once appended, are
// acknowledged: they are not redelivered for ever because the end marker
// beside them cannot be read.
func TestPoisonEndMarkerDoesNotPinResults(t *testing.T) {
	srv := testenv.Server(t)
	startReorders(t, srv, 1)
	js := jsFor(t, srv, "test-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const turn = "pinned"
	h, body := garbageEnd(t, turn)
	publish(t, ctx, js, sp.ResultEnd(tenant, turn), h, body)
	for seq := range 3 {
		if err := publishResult(ctx, js, turn, seq); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 10*time.Second, "the three results on the out subject", func() bool {
		return len(subjectMsgs(t, ctx, js, sp.OutStream(), sp.Out(tenant, turn))) == 3
	})
	cons, err := js.Consumer(ctx, sp.ResultStream(), sp.ReorderConsumer())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(8 * time.Second)
	for {
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumAckPending == 0 && info.NumPending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("results still pending after they were delivered: %d unacked, %d redelivered", info.NumAckPending, info.NumRedelivered)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPoisonResultDeadLettered: a result that does not decode (a broken
// producer, a non-Go executor) is dead-lettered by reorder, not forwarded
// to the agent; the turn still completes with one result per call.
func TestPoisonResultDeadLettered(t *testing.T) {
	srv := testenv.Server(t)
	startReorders(t, srv, 1)
	cl := testenv.Client(t, srv)
	js := jsFor(t, srv, "test-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	const turn = "bad_result"
	if err := publishResult(ctx, js, turn, 0); err != nil {
		t.Fatal(err)
	}
	// Result 1: the headers of a result, a body that is not one.
	h, _ := encode(t, turn, 1, &schemas.ToolResult{Seq: 1, ToolUseID: "toolu_1"})
	publish(t, ctx, js, sp.Result(tenant, turn, 1), h, []byte("\xc1 garbage"))
	if err := publishResult(ctx, js, turn, 2); err != nil {
		t.Fatal(err)
	}
	if err := publishEndMarker(ctx, js, turn, 3); err != nil {
		t.Fatal(err)
	}
	dead := func() bool {
		return len(subjectMsgs(t, ctx, js, sp.DLQStream(), sp.DLQ(tenant, subjects.StageReorder))) > 0
	}
	deadline := time.Now().Add(5 * time.Second)
	for !dead() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if !dead() {
		t.Errorf("no dead letter on %s for the garbage result", sp.DLQ(tenant, subjects.StageReorder))
	}
	for i, m := range subjectMsgs(t, ctx, js, sp.OutStream(), sp.Out(tenant, turn)) {
		if _, _, err := schemas.Decode(m.Header, m.Data); err != nil {
			t.Errorf("out message %d (%s) does not decode: %v", i, m.Header.Get("ce-type"), err)
		}
	}
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
	defer rcancel()
	results, done, err := readTurn(rctx, cl, turn)
	if err != nil {
		t.Fatalf("the agent's read: %v (%d results)", err, len(results))
	}
	if done.Results != 3 || !results[1].IsError {
		t.Errorf("turn_done %d, result 1 %+v", done.Results, results[1])
	}
}

// TestPoisonEndMarkerWrongType: an end marker that decodes but is not a
// turn_end (here a turn_done) is poison too: dead-lettered, not retried.
func TestPoisonEndMarkerWrongType(t *testing.T) {
	srv := testenv.Server(t)
	startReorders(t, srv, 1)
	js := jsFor(t, srv, "test-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, body := encode(t, "typed_end", -1, &schemas.TurnDone{Results: 0})
	publish(t, ctx, js, sp.ResultEnd(tenant, "typed_end"), h, body)
	deadline := time.Now().Add(5 * time.Second)
	for {
		dl := subjectMsgs(t, ctx, js, sp.DLQStream(), sp.DLQ(tenant, subjects.StageReorder))
		if len(dl) == 1 {
			if reason := dl[0].Header.Get(schemas.HeaderDLQReason); !strings.Contains(reason, "turn_done") {
				t.Errorf("reason %q does not name the wrong type", reason)
			}
			break
		}
		if time.Now().After(deadline) {
			cons, err := js.Consumer(ctx, sp.ResultStream(), sp.ReorderConsumer())
			if err != nil {
				t.Fatal(err)
			}
			info, err := cons.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Fatalf("%d dead letters; the reorder consumer has %d unacked, %d redelivered", len(dl), info.NumAckPending, info.NumRedelivered)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPoisonResultBehindGap: a result that does not decode, arriving while
// an earlier call's result is still missing, is kept (not terminated: the
// result stream would delete it) until the gap fills, and then gets an
// error result in its slot at once, not after the gap deadline.
func TestPoisonResultBehindGap(t *testing.T) {
	srv := testenv.Server(t)
	startReorders(t, srv, 1)
	cl := testenv.Client(t, srv)
	js := jsFor(t, srv, "test-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const turn = "poison_behind_gap"
	h, _ := encode(t, turn, 1, &schemas.ToolResult{Seq: 1, ToolUseID: "toolu_1"})
	publish(t, ctx, js, sp.Result(tenant, turn, 1), h, []byte("\xc1 garbage"))
	// Reorder meets the poison first, while call 0's result is missing.
	time.Sleep(time.Second)
	for _, seq := range []int{0, 2} {
		if err := publishResult(ctx, js, turn, seq); err != nil {
			t.Fatal(err)
		}
	}
	if err := publishEndMarker(ctx, js, turn, 3); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	results, done, err := readTurn(rctx, cl, turn)
	if err != nil {
		t.Fatalf("the turn did not complete: %v (%d results)", err, len(results))
	}
	if done.Results != 3 || !results[1].IsError {
		t.Errorf("turn_done %d, result 1 %+v", done.Results, results[1])
	}
}

// TestPoisonEndMarkerCountFromLease: when the end marker is not a
// turn_end, the lease (which the router wrote first) gives the count; the
// bad marker is kept until the turn is done, so the count can be read, and
// the turn gets its turn_done.
func TestPoisonEndMarkerCountFromLease(t *testing.T) {
	srv := testenv.Server(t)
	tools := testenv.Registry(t, testtools.Tools()...)
	startPipeline(t, srv, pipeline.Config{Tools: tools, Reorders: -1})
	cl := testenv.Client(t, srv)
	js := jsFor(t, srv, "test-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const turn = "poison_end"
	store := testenv.Store(t, ctx, srv)
	if err := cl.SubmitCall(ctx, turn, 0, client.Call{Name: "Noop", Input: json.RawMessage(`{}`)}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the turn's lease", func() bool {
		_, _, err := store.Get(ctx, tenant, turn)
		return err == nil
	})
	// A broken producer's marker takes the end's slot before the router's.
	h, body := garbageEnd(t, turn)
	publish(t, ctx, js, sp.ResultEnd(tenant, turn), h, body)
	if err := cl.EndTurn(ctx, turn, 1, "tool_use"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the lease to count the turn's call", func() bool {
		l, _, err := store.Get(ctx, tenant, turn)
		return err == nil && l.Total == 1
	})
	startPipeline(t, srv, pipeline.Config{Tools: tools, Routers: -1, Executors: -1})
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	results, done, err := readTurn(rctx, cl, turn)
	if err != nil || done.Results != 1 {
		t.Fatalf("the turn did not complete: %v (%d results)", err, len(results))
	}
}

// TestPoisonResultCountFromLease: a turn whose calls carried its count has
// no end marker, and its only result does not decode: reorder gives the
// call an error result, and takes the count from the lease (the router set
// it on the call's registration), so the turn gets its turn_done.
func TestPoisonResultCountFromLease(t *testing.T) {
	srv := testenv.Server(t)
	tools := testenv.Registry(t, testtools.Tools()...)
	startPipeline(t, srv, pipeline.Config{Tools: tools, Reorders: -1})
	cl := testenv.Client(t, srv)
	js := jsFor(t, srv, "test-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const turn = "poison_counted"
	call := client.Call{Name: "Sleep", Input: json.RawMessage(`{"ms":1000}`)}
	if err := cl.SubmitCalls(ctx, turn, []client.Call{call}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	store := testenv.Store(t, ctx, srv)
	waitFor(t, 10*time.Second, "the turn's lease", func() bool {
		_, _, err := store.Get(ctx, tenant, turn)
		return err == nil
	})
	// While the call runs, a broken producer's message takes its result's
	// slot; the executor's own result is then refused (one per slot).
	h, _ := encode(t, turn, 0, &schemas.ToolResult{Seq: 0, ToolUseID: "toolu_0"})
	publish(t, ctx, js, sp.Result(tenant, turn, 0), h, []byte("\xc1 garbage"))
	waitFor(t, 10*time.Second, "the call to be done in its lease", func() bool {
		l, _, err := store.Get(ctx, tenant, turn)
		return err == nil && l.Total == 1 && lease.Complete(l)
	})
	startPipeline(t, srv, pipeline.Config{Tools: tools, Routers: -1, Executors: -1})
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	results, done, err := readTurn(rctx, cl, turn)
	if err != nil || done.Results != 1 || len(results) != 1 || !results[0].IsError {
		t.Fatalf("the turn did not complete as it should: %v, %d results, done %+v", err, len(results), done)
	}
}
