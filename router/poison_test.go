package router_test

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

// poison is one undecodable input event and what its dead-letter reason
// must say.
type poison struct {
	name   string
	turn   string
	header nats.Header
	body   []byte
	reason []string // substrings of Tw-Dlq-Reason
}

func poisons(t *testing.T) []poison {
	good := func(turn string) (nats.Header, []byte) {
		// No ce-seq: nothing says which call it was, so only the DLQ sees it.
		return encode(t, turn, -1, &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_x", Name: "Noop", Input: schemas.RawJSON(`{}`), Complete: true})
	}
	var ps []poison

	h, _ := good("p_garbage")
	ps = append(ps, poison{name: "garbage body", turn: "p_garbage", header: h, body: []byte("\xc1\xc1 this is not msgpack"), reason: []string{"data", "msgpack"}})

	h, body := good("p_notype")
	h.Del("ce-type")
	ps = append(ps, poison{name: "missing ce-type", turn: "p_notype", header: h, body: body, reason: []string{"ce-type", "required"}})

	h, body = good("p_badtype")
	h.Set("ce-type", "dev.toolwire.bogus.v1")
	ps = append(ps, poison{name: "unknown ce-type", turn: "p_badtype", header: h, body: body, reason: []string{"ce-type", "dev.toolwire.bogus.v1"}})

	h, _ = good("p_noseq")
	h.Set("ce-datacontenttype", schemas.ContentJSON)
	ps = append(ps, poison{name: "JSON body missing seq", turn: "p_noseq", header: h,
		body: []byte(`{"tool_use_id":"toolu_x","name":"Noop","input":{},"complete":true}`), reason: []string{"seq", "required"}})

	ps = append(ps, poison{name: "no headers at all", turn: "p_bare", header: nats.Header{}, body: []byte("hello"), reason: []string{"ce-specversion"}})

	// A direct get's answer, aimed at this subject by another tenant: the
	// server names the subject it was stored on.
	h, body = good("p_copy")
	h.Set("Nats-Subject", "tw.other.in.x.use")
	ps = append(ps, poison{name: "a copy of another subject's message", turn: "p_copy", header: h, body: body, reason: []string{"a copy of the message stored on tw.other.in.x.use"}})

	h, body = encode(t, "p_output", 0, &schemas.TurnDone{Results: 1})
	ps = append(ps, poison{name: "output event on the input subject", turn: "p_output", header: h, body: body, reason: []string{"not an input event"}})
	return ps
}

// TestPoisonInputDeadLettered: undecodable input events are terminated,
// copied to tw.default.dlq.router with a reason naming the problem, not
// redelivered; the router goes on and a good turn after them completes.
func TestPoisonInputDeadLettered(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...)})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	ps := poisons(t)
	for _, p := range ps {
		publish(t, ctx, js, sp.In(tenant, p.turn, subjects.KindUse), p.header, p.body)
	}
	calls := []client.Call{
		{ID: "a", Name: "Noop", Input: json.RawMessage(`{"x":1}`)},
		{ID: "b", Name: "Sleep", Input: json.RawMessage(`{"ms":5,"safe":true}`)},
	}
	if err := cl.SubmitCalls(ctx, "p_good", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	results, _, err := readTurn(ctx, cl, "p_good")
	if err != nil {
		t.Fatalf("good turn after the poison: %v (%d results)", err, len(results))
	}
	if len(results) != 2 || results[0].IsError || results[1].IsError {
		t.Fatalf("good turn: %+v", results)
	}

	dlqSubject := sp.DLQ(tenant, subjects.StageRouter)
	var dl []*jetstream.RawStreamMsg
	waitFor(t, 10*time.Second, "every poison message on "+dlqSubject, func() bool {
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
		subject := sp.In(tenant, p.turn, subjects.KindUse)
		m, ok := bySubject[subject]
		if !ok {
			t.Errorf("%s: no dead letter for %s", p.name, subject)
			continue
		}
		reason := m.Header.Get(schemas.HeaderDLQReason)
		for _, want := range p.reason {
			if !strings.Contains(reason, want) {
				t.Errorf("%s: reason %q does not mention %q", p.name, reason, want)
			}
		}
		if got := m.Header.Get(schemas.HeaderDLQStage); got != subjects.StageRouter {
			t.Errorf("%s: stage header %q", p.name, got)
		}
		if string(m.Data) != string(p.body) {
			t.Errorf("%s: dead letter body %q, want the original %q", p.name, m.Data, p.body)
		}
		t.Logf("%s: %s", p.name, reason)
	}

	// Terminated, not retried: nothing pending, nothing redelivered.
	cons, err := js.Consumer(ctx, sp.InStream(), sp.RouterConsumer())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the router consumer to have nothing pending", func() bool {
		info, err := cons.Info(ctx)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0
	})
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.NumRedelivered != 0 {
		t.Errorf("router consumer redelivered %d messages; poison must not be retried", info.NumRedelivered)
	}
	// Without ce-seq nobody knows which call it was: no result is made up.
	rs, err := js.Stream(ctx, sp.ResultStream())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if _, err := rs.GetLastMsgForSubject(ctx, sp.Result(tenant, p.turn, 0)); err == nil {
			t.Errorf("%s: a result was published for a call nobody can name", p.name)
		}
	}
}

// TestPoisonUseWithSeqStillAnswered: a tool_use that does not decode but
// whose ce-seq header names the call is dead-lettered and answered with an
// error result, so the turn (turn_end of N calls) completes with N results.
func TestPoisonUseWithSeqStillAnswered(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...)})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const turn = "p_seq"
	use := func(seq int) *schemas.ToolUse {
		return &schemas.ToolUse{Seq: seq, ToolUseID: "toolu_" + string(rune('a'+seq)), Name: "Noop", Input: schemas.RawJSON(`{"n":1}`), Complete: true}
	}
	publishUse(t, ctx, js, turn, use(0))
	// seq 1: valid headers (ce-seq 1), body that is not msgpack.
	h, _ := encode(t, turn, 1, use(1))
	publish(t, ctx, js, sp.In(tenant, turn, subjects.KindUse), h, []byte{0xc1, 0x00, 0xff})
	// seq 2: JSON body without its seq; the ce-seq header still says 2.
	h, _ = encode(t, turn, 2, use(2))
	h.Set("ce-datacontenttype", schemas.ContentJSON)
	publish(t, ctx, js, sp.In(tenant, turn, subjects.KindUse), h, []byte(`{"tool_use_id":"toolu_c","name":"Noop","input":{},"complete":true}`))
	publishUse(t, ctx, js, turn, use(3))
	publishEnd(t, ctx, js, turn, 4)

	results, done, err := readTurn(ctx, cl, turn)
	if err != nil {
		t.Fatalf("%v (%d results)", err, len(results))
	}
	if len(results) != 4 || done.Results != 4 {
		t.Fatalf("%d results, turn_done %d; want 4", len(results), done.Results)
	}
	for _, i := range []int{0, 3} {
		if r := results[i]; r.IsError || r.Content != `{"n":1}` {
			t.Errorf("good call %d: %+v", i, r)
		}
	}
	for _, i := range []int{1, 2} {
		r := results[i]
		if !r.IsError || !strings.Contains(r.Content, "malformed tool_use event") {
			t.Errorf("malformed call %d: %+v", i, r)
		}
	}
	if !strings.Contains(results[2].Content, "seq") {
		t.Errorf("result of the call without seq does not say what was wrong: %q", results[2].Content)
	}
	dl := subjectMsgs(t, ctx, js, sp.DLQStream(), sp.DLQ(tenant, subjects.StageRouter))
	if len(dl) != 2 {
		t.Errorf("%d dead letters, want 2", len(dl))
	}
}

// TestPoisonDeadLetterKeepsProducerHeaders: a producer may guard its
// publishes with JetStream's own headers (Nats-Expected-Stream is the
// common one); the stored event keeps them. A poison event carrying one
// must still reach the dead-letter subject: the copy must not replay the
// original publish's expectations against TW_DLQ.
func TestPoisonDeadLetterKeepsProducerHeaders(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...)})
	js := jsFor(t, srv, "test-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	h, _ := encode(t, "p_guarded", -1, &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_x", Name: "Noop", Input: schemas.RawJSON(`{}`), Complete: true})
	subject := sp.In(tenant, "p_guarded", subjects.KindUse)
	publish(t, ctx, js, subject, h, []byte("garbage"), jetstream.WithExpectStream(sp.InStream()))
	// A second poison message published the same way after it.
	publish(t, ctx, js, sp.In(tenant, "p_guarded2", subjects.KindUse), h, []byte("garbage"), jetstream.WithExpectStream(sp.InStream()))

	dlqSubject := sp.DLQ(tenant, subjects.StageRouter)
	cons, err := js.Consumer(ctx, sp.InStream(), sp.RouterConsumer())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the router to handle both events", func() bool {
		info, err := cons.Info(ctx)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0
	})
	time.Sleep(200 * time.Millisecond)
	dl := subjectMsgs(t, ctx, js, sp.DLQStream(), dlqSubject)
	if len(dl) != 2 {
		t.Fatalf("%d dead letters on %s for 2 poison events published with Nats-Expected-Stream: %s (the copy lost them)", len(dl), dlqSubject, sp.InStream())
	}
}

// TestPoisonDuplicateDoesNotOverrideRunningCall: a malformed copy of a call
// that is already routed and running (same ce-seq; a corrupted replay)
// is dead-lettered, but must not answer the call in its place: the call's
// real result is the one the agent gets, and the unsafe call after it does
// not start while it still runs.
func TestPoisonDuplicateDoesNotOverrideRunningCall(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...)})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const turn = "p_dup"
	first := &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_0", Name: "Sleep", Input: schemas.RawJSON(`{"ms":1500}`), Complete: true}
	publishUse(t, ctx, js, turn, first)
	store := mustStore(t, ctx, srv)
	waitFor(t, 10*time.Second, "call 0 to run", func() bool {
		l, _, err := store.Get(ctx, tenant, turn)
		return err == nil && len(l.Calls) > 0 && l.Calls[0].State == schemas.CallRunning
	})
	// Call 0 sleeps until about here, at the earliest.
	sleepsUntil := time.Now().Add(1400 * time.Millisecond)
	h, _ := encode(t, turn, 0, first)
	publish(t, ctx, js, sp.In(tenant, turn, subjects.KindUse), h, []byte("\xc1 corrupted copy"))
	publishUse(t, ctx, js, turn, &schemas.ToolUse{Seq: 1, ToolUseID: "toolu_1", Name: "Sleep", Input: schemas.RawJSON(`{"ms":1}`), Complete: true})
	publishEnd(t, ctx, js, turn, 2)

	results, _, err := readTurn(ctx, cl, turn)
	if err != nil {
		t.Fatalf("%v (%d results)", err, len(results))
	}
	if r := results[0]; r.IsError || r.Content != "slept 1500 ms" {
		t.Errorf("call 0 was answered by its corrupted copy: %+v", r)
	}
	if results[1].StartedAt.Before(results[0].FinishedAt) || results[1].StartedAt.Before(sleepsUntil) {
		t.Errorf("unsafe call 1 started at %v, while call 0 still ran (until %v at least)", results[1].StartedAt, sleepsUntil)
	}
	waitFor(t, 5*time.Second, "the dead letter", func() bool {
		return len(subjectMsgs(t, ctx, js, sp.DLQStream(), sp.DLQ(tenant, subjects.StageRouter))) == 1
	})
}
