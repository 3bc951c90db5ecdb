package reader_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/reader"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// env is a server with the pipeline's streams, a reader with cfg and a
// connection to ask it on.
type env struct {
	nc *nats.Conn
	js jetstream.JetStream
	sp subjects.Space
	// quiet is how long ask waits for a reply before it takes it that
	// none comes.
	quiet time.Duration
}

func start(t *testing.T, ctx context.Context, cfg reader.Config) *env {
	t.Helper()
	srv, err := embedded.Start(embedded.Options{StoreDir: t.TempDir(), MaxMemory: 64 << 20, MaxStore: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	e := &env{sp: subjects.Default(), quiet: 5 * time.Second}
	if e.nc, err = srv.Connect("test"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.nc.Close)
	if e.js, err = jetstream.New(e.nc); err != nil {
		t.Fatal(err)
	}
	if err := provision.Streams(ctx, e.js, e.sp, provision.Config{}); err != nil {
		t.Fatal(err)
	}
	rnc, err := srv.Connect("reader")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rnc.Close)
	cfg.Space = e.sp
	r, err := reader.New(rnc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- r.Run(rctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-ran; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	// Run has subscribed once a request is answered.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := e.nc.Request(e.sp.Read("x", subjects.ReadOut, "x"), nil, 100*time.Millisecond); err == nil {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatal("the reader never answered")
		}
	}
}

// put stores d on subject for tenant and turn, and returns its sequence.
func (e *env) put(t *testing.T, ctx context.Context, subject, tenant, turn string, seq int, d schemas.Data) uint64 {
	t.Helper()
	h, body, err := schemas.Encode(schemas.Meta{Source: "/test", Tenant: tenant, Turn: turn, Seq: seq}, d)
	if err != nil {
		t.Fatal(err)
	}
	ack, err := e.js.PublishMsg(ctx, &nats.Msg{Subject: subject, Header: h, Data: body})
	if err != nil {
		t.Fatal(err)
	}
	return ack.Sequence
}

// answer is what a read request brought: the sequences of the messages,
// then "done", "more" or the error marker's reason; "no answer" when
// nothing came.
func (e *env) ask(t *testing.T, subject, reply, body string) string {
	t.Helper()
	if reply == "" {
		reply = e.nc.NewInbox()
	}
	sub, err := e.nc.SubscribeSync(reply)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := e.nc.PublishRequest(subject, reply, []byte(body)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		m, err := sub.NextMsg(e.quiet)
		if err != nil {
			return strings.Join(append(got, "no answer"), " ")
		}
		r, err := schemas.ParseReadReply(m.Header)
		switch {
		case err != nil:
			return strings.Join(append(got, err.Error()), " ")
		case r.End && r.More:
			return strings.Join(append(got, "more"), " ")
		case r.End:
			return strings.Join(append(got, "done"), " ")
		}
		if _, _, err := schemas.Decode(m.Header, m.Data); err != nil {
			t.Errorf("reply with sequence %d: %v", r.Seq, err)
		}
		got = append(got, fmt.Sprint(r.Seq))
	}
}

func after(seq uint64) string {
	return string(schemas.EncodeReadRequest(schemas.ReadRequest{After: seq}))
}

// TestRead: a read brings the messages of the tenant's turn after the
// sequence asked, no other tenant's or turn's, at most MaxMsgs at a time;
// an approval read brings the turn's requests and not their decisions.
func TestRead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := start(t, ctx, reader.Config{MaxMsgs: 3})
	sp := e.sp
	for seq := range 4 {
		e.put(t, ctx, sp.Out("acme", "t1"), "acme", "t1", seq, &schemas.ToolResult{Seq: seq, ToolUseID: "c", Name: "Noop"})
		e.put(t, ctx, sp.Out("globex", "t1"), "globex", "t1", seq, &schemas.ToolResult{Seq: seq, ToolUseID: "c", Name: "Noop"})
		e.put(t, ctx, sp.Out("acme", "t2"), "acme", "t2", seq, &schemas.ToolResult{Seq: seq, ToolUseID: "c", Name: "Noop"})
	}
	for _, tc := range []struct{ subject, body, want string }{
		{sp.Read("acme", subjects.ReadOut, "t1"), "", "1 4 7 more"},
		{sp.Read("acme", subjects.ReadOut, "t1"), after(7), "10 done"},
		{sp.Read("acme", subjects.ReadOut, "t1"), after(10), "done"},
		{sp.Read("globex", subjects.ReadOut, "t1"), after(1), "2 5 8 more"},
		{sp.Read("acme", subjects.ReadOut, "t9"), "", "done"},
	} {
		if got := e.ask(t, tc.subject, "", tc.body); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.subject, tc.body, got, tc.want)
		}
	}

	req := e.put(t, ctx, sp.ApprovalRequest("acme", "t1", 0), "acme", "t1", 0, &schemas.ApprovalRequest{Seq: 0, ToolUseID: "c", Tool: "Bash", Input: schemas.RawJSON(`{}`)})
	e.put(t, ctx, sp.ApprovalDecision("acme", "t1", 0), "acme", "t1", 0, &schemas.ApprovalDecision{Seq: 0, Allow: true})
	req2 := e.put(t, ctx, sp.ApprovalRequest("acme", "t1", 1), "acme", "t1", 1, &schemas.ApprovalRequest{Seq: 1, ToolUseID: "c", Tool: "Bash", Input: schemas.RawJSON(`{}`)})
	e.put(t, ctx, sp.ApprovalRequest("globex", "t1", 0), "globex", "t1", 0, &schemas.ApprovalRequest{Seq: 0, ToolUseID: "c", Tool: "Bash", Input: schemas.RawJSON(`{}`)})
	want := fmt.Sprintf("%d %d done", req, req2)
	if got := e.ask(t, sp.Read("acme", subjects.ReadApprovals, "t1"), "", ""); got != want {
		t.Errorf("acme's approval requests of t1: %s, want %s", got, want)
	}
}

// TestReadBytes: MaxBytes ends a read after the message that reaches it,
// and a message over it still comes, alone.
func TestReadBytes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := start(t, ctx, reader.Config{MaxBytes: 1})
	for seq := range 2 {
		e.put(t, ctx, e.sp.Out("acme", "t1"), "acme", "t1", seq, &schemas.ToolResult{Seq: seq, ToolUseID: "c", Name: "Noop"})
	}
	subject := e.sp.Read("acme", subjects.ReadOut, "t1")
	if got := e.ask(t, subject, "", ""); got != "1 more" {
		t.Errorf("first read: %s, want 1 more", got)
	}
	if got := e.ask(t, subject, "", after(1)); got != "2 more" {
		t.Errorf("second read: %s, want 2 more", got)
	}
	if got := e.ask(t, subject, "", after(2)); got != "done" {
		t.Errorf("third read: %s, want done", got)
	}
}

// TestBadRequests: a request that is not one gets an error marker saying
// what was wrong; a reply subject that is not an inbox, or is another
// tenant's, gets nothing; the reader answers the next request as before.
func TestBadRequests(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := start(t, ctx, reader.Config{})
	sp := e.sp
	e.put(t, ctx, sp.Out("acme", "t1"), "acme", "t1", 0, &schemas.ToolResult{Seq: 0, ToolUseID: "c", Name: "Noop"})
	ok := sp.Read("acme", subjects.ReadOut, "t1")
	for _, tc := range []struct{ subject, body, want string }{
		{ok, "nope", "read request: not a JSON object"},
		{ok, `{"after":-1}`, "read request: not a JSON object"},
		{ok, `{"after":18446744073709551615}`, "field after"},
		{ok, `{"after":1` + strings.Repeat(" ", 300) + `}`, "over 256"},
		{"tw.acme.read.lease.t1", "", `reads "lease"`},
		{"tw.acme.read.out.t%1", "", `turn "t%1"`},
	} {
		got := e.ask(t, tc.subject, "", tc.body)
		if !strings.HasPrefix(got, schemas.ErrReadFailed.Error()) || !strings.Contains(got, tc.want) {
			t.Errorf("%s %.20q: %s, want an error marker with %q", tc.subject, tc.body, got, tc.want)
		}
	}
	// Answers come within milliseconds; waiting a bit for none is enough.
	e.quiet = 300 * time.Millisecond
	for _, reply := range []string{sp.Inbox("globex") + ".x", sp.Out("globex", "t1"), "$JS.API.STREAM.PURGE.TW_OUT", "tw_lease.x"} {
		if got := e.ask(t, ok, reply, ""); got != "no answer" {
			t.Errorf("reply to %s: %s, want no answer", reply, got)
		}
	}
	e.quiet = 5 * time.Second
	if got := e.ask(t, ok, sp.Inbox("acme")+".x", ""); got != "1 done" {
		t.Errorf("reply to acme's inbox: %s, want 1 done", got)
	}
}
