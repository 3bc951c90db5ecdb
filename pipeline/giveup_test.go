package pipeline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/testtools"
)

// fastGiveUp is a pipeline that gives up on a message after three quick
// deliveries, so the tests of what happens then finish in seconds.
func fastGiveUp(t *testing.T) (*pipeline.Pipeline, jetstream.JetStream, *client.Client, func() []*jetstream.RawStreamMsg) {
	t.Helper()
	srv := testenv.Server(t)
	p := testenv.Pipeline(t, srv, pipeline.Config{
		Tools: testenv.Registry(t, testtools.Tools()...), Executors: 2,
		MaxDeliver: 3, Backoff: stage.Backoff{Initial: 20 * time.Millisecond, Max: 100 * time.Millisecond},
	})
	js := testenv.JS(t, srv, "test-giveup")
	sp := subjects.Default()
	deadLetters := func() []*jetstream.RawStreamMsg {
		s, err := js.Stream(context.Background(), sp.DLQStream())
		if err != nil {
			t.Fatal(err)
		}
		var out []*jetstream.RawStreamMsg
		for seq := uint64(1); ; seq++ {
			m, err := s.GetMsg(context.Background(), seq)
			if err != nil {
				return out
			}
			out = append(out, m)
		}
	}
	return p, js, testenv.Client(t, srv), deadLetters
}

// TestLeaseBucketDeletedMidTurn: the lease bucket is deleted while a turn
// runs (one call running, two waiting behind it). No stage can process
// those calls any more; on each message's last delivery the call gets an
// error result naming the cause, the turn completes, and a dead letter
// holds each message given up on.
func TestLeaseBucketDeletedMidTurn(t *testing.T) {
	_, js, cl, deadLetters := fastGiveUp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	calls := []client.Call{
		{ID: "a", Name: "Sleep", Input: json.RawMessage(`{"ms":400}`)},
		{ID: "b", Name: "Noop", Input: json.RawMessage(`{"n":1}`)},
		{ID: "c", Name: "Noop", Input: json.RawMessage(`{"n":2}`)},
	}
	if err := cl.SubmitCalls(ctx, "no_lease", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, ctx, js, "no_lease")
	if err := js.DeleteKeyValue(ctx, subjects.Default().LeaseBucket()); err != nil {
		t.Fatal(err)
	}
	res, done, err := testenv.ReadTurn(ctx, cl, "no_lease")
	if err != nil {
		t.Fatalf("the turn did not complete: %v (%d results)", err, len(res))
	}
	if len(res) != 3 || done.Results != 3 {
		t.Fatalf("%d results, turn_done %d", len(res), done.Results)
	}
	for _, r := range res[1:] {
		if !r.IsError || !strings.Contains(r.Content, "gave up after 3 deliveries") {
			t.Errorf("seq %d: want an error result naming the cause, got %+v", r.Seq, r)
		}
	}
	// The dead letter follows the answer (never the other way round), so
	// it may land just after the turn completed.
	testenv.WaitFor(t, 10*time.Second, "a dead letter per message given up on (at least the two waiting calls)", func() bool { return len(deadLetters()) >= 2 })
}

// waitRunning waits until the turn's first call has started.
func waitRunning(t *testing.T, ctx context.Context, js jetstream.JetStream, turn string) {
	t.Helper()
	kv, err := js.KeyValue(ctx, subjects.Default().LeaseBucket())
	if err != nil {
		t.Fatal(err)
	}
	for {
		if e, err := kv.Get(ctx, subjects.Default().LeaseKey(subjects.DefaultTenant, turn)); err == nil {
			if l, err := schemas.DecodeLease(e.Value()); err == nil {
				if c := l.Peek(0); c != nil && c.State == schemas.CallRunning {
					return
				}
			}
		}
		if ctx.Err() != nil {
			t.Fatal("the first call never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTenantNotAKey: valid calls on a subject whose tenant the lease cannot
// use as a key are answered at once, each with an error naming the
// tenant, the turn completes, and every message has its dead letter —
// instead of being retried and dropped.
func TestTenantNotAKey(t *testing.T) {
	_, js, _, deadLetters := fastGiveUp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const tenant, turn, n = "bad$tenant", "t1", 50
	sp := subjects.Default()
	for seq := range n {
		h, body, err := schemas.Encode(schemas.Meta{Source: "/test", Tenant: tenant, Turn: turn, Seq: seq},
			&schemas.ToolUse{Seq: seq, ToolUseID: "toolu_x", Name: "Noop", Input: schemas.RawJSON(`{}`), Complete: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: sp.In(tenant, turn, subjects.KindUse), Header: h, Data: body}); err != nil {
			t.Fatal(err)
		}
	}
	h, body, _ := schemas.Encode(schemas.Meta{Source: "/test", Tenant: tenant, Turn: turn, Seq: -1}, &schemas.TurnEnd{Calls: n})
	if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: sp.In(tenant, turn, subjects.KindEnd), Header: h, Data: body}); err != nil {
		t.Fatal(err)
	}
	out, err := js.Stream(ctx, sp.OutStream())
	if err != nil {
		t.Fatal(err)
	}
	for {
		m, err := out.GetLastMsgForSubject(ctx, sp.Out(tenant, turn))
		if err == nil && m.Header.Get("ce-type") == schemas.TypeTurnDone {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the turn never completed (last out message: %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	results := testenv.SubjectMsgs(t, ctx, js, sp.OutStream(), sp.Out(tenant, turn))
	if len(results) != n+1 {
		t.Fatalf("%d messages on the out subject, want %d results and turn_done", len(results), n)
	}
	_, data, err := schemas.Decode(results[0].Header, results[0].Data)
	if r, ok := data.(*schemas.ToolResult); err != nil || !ok || !r.IsError || !strings.Contains(r.Content, "tenant") {
		t.Errorf("first result: %v %+v", err, data)
	}
	if got := len(deadLetters()); got != n+1 {
		t.Errorf("%d dead letters, want %d (every call and the turn's end)", got, n+1)
	}
}
