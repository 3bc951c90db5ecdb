package reorder_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/schemas"
)

// TestForeignOutMessages: a message that is not a turn's own can reach the
// turn's out subject — a direct get's answer aimed there by another tenant
// is stored by the stream that captures the subject. Reorder's own appends
// carry an expectation on their own subject, so an answer holding one is
// refused wherever it is aimed; and a message without one (another
// stream's, stored there) is skipped when reorder reads its cursor, so it
// neither ends the turn nor hides the turn's own results.
func TestForeignOutMessages(t *testing.T) {
	srv := testenv.Server(t)
	startReorders(t, srv, 1)
	cl := testenv.Client(t, srv)
	nc := testenv.Conn(t, srv, "intruder")
	js := jsFor(t, srv, "test")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// A finished one-call turn: its only out message is the result that
	// ends it, appended expecting an empty subject.
	if err := publishCounted(ctx, js, "a0", 0, 1); err != nil {
		t.Fatal(err)
	}
	if err := readAll(ctx, cl, "a0", 1); err != nil {
		t.Fatal(err)
	}
	// The client may have it from its subscription before the stream
	// stored it; asked before, the direct get answers "404 no message",
	// and that status is what would be stored on b's subject.
	waitFor(t, 10*time.Second, "a0's result in the out stream", func() bool {
		return len(subjectMsgs(t, ctx, js, sp.OutStream(), sp.Out(tenant, "a0"))) == 1
	})
	// Its answer, aimed at the empty out subject of turn b.
	if err := nc.PublishRequest("$JS.API.DIRECT.GET."+sp.OutStream()+"."+sp.Out(tenant, "a0"), sp.Out(tenant, "b"), nil); err != nil {
		t.Fatal(err)
	}
	// And a message with no expectation, stored on turn c's subject
	// before the turn's results: a turn_done of another turn.
	h, body, err := schemas.Encode(schemas.Meta{Source: "/intruder", Tenant: "other", Turn: "x", Seq: -1}, &schemas.TurnDone{Results: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishMsg(ctx, natsMsg(sp.Out(tenant, "c"), h, body)); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the direct get's answer, if it were stored
	if got := subjectMsgs(t, ctx, js, sp.OutStream(), sp.Out(tenant, "b")); len(got) != 0 {
		t.Errorf("turn a0's out message was stored again on b's subject: %v", got[0].Header)
	}
	// Turn c runs as if the message were not there: the reader drops it,
	// reorder appends c's results after it.
	for seq := range 2 {
		if err := publishCounted(ctx, js, "c", seq, 2); err != nil {
			t.Fatal(err)
		}
	}
	if err := readAll(ctx, cl, "c", 2); err != nil {
		t.Fatal(err)
	}
	// A copy whose ce-* headers claim turn d (another tenant can write
	// those on its own messages) but whose Nats-Subject — set by the
	// server on a direct get's answer — names where it was stored.
	h, body, err = schemas.Encode(schemas.Meta{Source: "/intruder", Tenant: tenant, Turn: "d", Seq: -1}, &schemas.TurnDone{Results: 1})
	if err != nil {
		t.Fatal(err)
	}
	h.Set("Nats-Subject", "tw.other.out.x")
	if _, err := js.PublishMsg(ctx, natsMsg(sp.Out(tenant, "d"), h, body)); err != nil {
		t.Fatal(err)
	}
	if err := publishCounted(ctx, js, "d", 0, 1); err != nil {
		t.Fatal(err)
	}
	if err := readAll(ctx, cl, "d", 1); err != nil {
		t.Fatal(err)
	}
	// From a cursor read, too: a result of c that comes again after a
	// restart of reorder (no cache) is turned away, not appended.
	startReorders(t, srv, 1)
	if err := publishCounted(ctx, js, "c", 1, 2); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, ctx, js)
	if got := subjectMsgs(t, ctx, js, sp.OutStream(), sp.Out(tenant, "c")); len(got) != 3 {
		t.Errorf("turn c's out subject holds %d messages, want the foreign one and its 2 results", len(got))
	}
}
