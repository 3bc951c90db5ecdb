package executor

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/apimember"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// TestPublishResultTwice: a result published again — its first ack lost,
// or a second attempt's — is refused as the subject's second message,
// and the refusal counts as stored because the result is there; the
// stream keeps the first.
func TestPublishResultTwice(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := embedded.Start(embedded.Options{StoreDir: t.TempDir(), MaxMemory: 64 << 20, MaxStore: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	nc, err := srv.Connect("executor")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	sp := subjects.Default()
	if err := provision.Streams(ctx, js, sp, provision.Config{}); err != nil {
		t.Fatal(err)
	}
	e := &Executor{cfg: Config{Space: sp, Source: "test"}, js: js, nc: js.Conn()}
	p := subjects.Parsed{Tenant: subjects.DefaultTenant, Turn: "turn_twice"}
	for i, text := range []string{"first", "second"} {
		r := &schemas.ToolResult{Seq: 0, ToolUseID: "toolu_1", Content: text}
		if err := e.publishResult(ctx, p, schemas.Meta{}, r); err != nil {
			t.Fatalf("publish %d: %v", i+1, err)
		}
	}
	s, err := js.Stream(ctx, sp.ResultStream())
	if err != nil {
		t.Fatal(err)
	}
	if info, err := s.Info(ctx); err != nil || info.State.Msgs != 1 {
		t.Fatalf("stream holds %v messages (%v), want 1", info, err)
	}
	m, err := s.GetLastMsgForSubject(ctx, sp.Result(p.Tenant, p.Turn, 0))
	if err != nil {
		t.Fatal(err)
	}
	_, d, err := schemas.Decode(m.Header, m.Data)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.(*schemas.ToolResult).Content; got != "first" {
		t.Fatalf("stored %q, want the first result", got)
	}
}

// TestPublishResultUnanswered: a publish nobody answered (a stream electing
// its leader; here a subscriber that stays silent) is given up without a
// look for the result: that look is a leader read, which waits its whole
// bound in the same silence, and a publish whose ack was lost is refused
// as a second message when sent again, and looked for then.
func TestPublishResultUnanswered(t *testing.T) {
	sp := subjects.Default()
	var asked atomic.Int32
	js := apimember.Start(t, map[string]nats.MsgHandler{
		sp.ResultAll(): func(*nats.Msg) {},
		"$JS.API.>":    func(*nats.Msg) { asked.Add(1) },
	})
	e := &Executor{cfg: Config{Space: sp, Source: "test"}, js: js, nc: js.Conn()}
	r := &schemas.ToolResult{Seq: 0, ToolUseID: "toolu_1", Content: "x"}
	err := e.publishResult(context.Background(), subjects.Parsed{Tenant: subjects.DefaultTenant, Turn: "turn_silent"}, schemas.Meta{}, r)
	if err == nil {
		t.Fatal("a publish nobody answered succeeded")
	}
	if n := asked.Load(); n != 0 {
		t.Fatalf("%d JetStream API requests after the silent publish, want none", n)
	}
}
