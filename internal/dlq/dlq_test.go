package dlq_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/internal/dlq"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/testtools"
)

// TestListShowReplay: a message a stage gave up on is listed with its
// stage, subject and reason; once sent back to its subject it is handled
// anew (here the call runs and its turn completes) and, with remove,
// leaves the dead-letter stream. A letter naming a subject no stage
// consumes is not sent anywhere.
func TestListShowReplay(t *testing.T) {
	srv := testenv.Server(t)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...)})
	js := testenv.JS(t, srv, "operator")
	cl := testenv.Client(t, srv)
	sp := subjects.Default()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// A garbage event: the router gives up on it.
	h, _ := testenv.Encode(t, "broken", 0, &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_0", Name: "Noop", Input: schemas.RawJSON(`{}`), Complete: true, Calls: 1})
	h.Del("ce-seq")
	h.Del("ce-calls")
	testenv.Publish(t, ctx, js, sp.In(subjects.DefaultTenant, "broken", subjects.KindUse), h, []byte("\xc1 garbage"))
	// A good call dead-lettered as a stage would (the fault since fixed).
	const turn = "fixed"
	h, body := testenv.Encode(t, turn, 0, &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_0", Name: "Noop", Input: schemas.RawJSON(`{}`), Complete: true, Calls: 1})
	good := &nats.Msg{Subject: sp.DLQ(subjects.DefaultTenant, subjects.StageRouter), Header: h, Data: body}
	good.Header.Set(schemas.HeaderDLQReason, "router: the lease bucket was gone")
	good.Header.Set(schemas.HeaderDLQSubject, sp.In(subjects.DefaultTenant, turn, subjects.KindUse))
	good.Header.Set(schemas.HeaderDLQStage, subjects.StageRouter)
	// And one that names a subject no stage consumes.
	stray := &nats.Msg{Subject: sp.DLQ(subjects.DefaultTenant, subjects.StageRouter), Header: nats.Header{}, Data: body}
	stray.Header.Set(schemas.HeaderDLQSubject, "$JS.API.STREAM.DELETE.TW_OUT")

	r, err := dlq.New(ctx, js, sp)
	if err != nil {
		t.Fatal(err)
	}
	var letters []dlq.Letter
	testenv.WaitFor(t, 10*time.Second, "the garbage event's dead letter", func() bool {
		letters, err = r.List(ctx, dlq.Filter{Stage: subjects.StageRouter})
		return err == nil && len(letters) == 1
	})
	if l := letters[0]; l.Stage != subjects.StageRouter || l.Tenant != subjects.DefaultTenant ||
		!strings.Contains(l.Original, ".in.broken.use") || !strings.Contains(l.Reason, "malformed") && !strings.Contains(l.Reason, "msgpack") {
		t.Errorf("letter %+v", l)
	}
	for _, m := range []*nats.Msg{good, stray} {
		if _, err := js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if letters, err = r.List(ctx, dlq.Filter{}); err != nil || len(letters) != 3 {
		t.Fatalf("%d letters: %v", len(letters), err)
	}
	if only, err := r.List(ctx, dlq.Filter{Limit: 2}); err != nil || len(only) != 2 {
		t.Errorf("limit 2: %d letters: %v", len(only), err)
	}
	if none, err := r.List(ctx, dlq.Filter{Stage: subjects.StageReorder}); err != nil || len(none) != 0 {
		t.Errorf("reorder's: %d letters: %v", len(none), err)
	}
	if _, err := r.List(ctx, dlq.Filter{Tenant: "a.b"}); err == nil {
		t.Error("a tenant that is no token was taken")
	}

	l, err := r.Get(ctx, letters[1].Seq)
	if err != nil || l.Original != good.Header.Get(schemas.HeaderDLQSubject) {
		t.Fatalf("get %d: %+v %v", letters[1].Seq, l, err)
	}
	if _, err := r.Replay(ctx, l, true); err != nil {
		t.Fatal(err)
	}
	results, done, err := testenv.ReadTurn(ctx, cl, turn)
	if err != nil || done.Results != 1 || results[0].IsError {
		t.Fatalf("the replayed call's turn: %v, %+v", err, results)
	}
	if _, err := r.Get(ctx, l.Seq); !errors.Is(err, dlq.ErrNotFound) {
		t.Errorf("the replayed letter was not removed: %v", err)
	}
	if _, err := r.Replay(ctx, letters[2], false); err == nil || !strings.Contains(err.Error(), "not a subject a stage consumes") {
		t.Errorf("stray letter: %v", err)
	}
}
