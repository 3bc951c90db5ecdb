package testenv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// The helpers below are for tests that drive one stage by hand: publish
// events as a producer would, read what a stage wrote, wait for a state.

// JS returns a JetStream context on a connection of its own.
func JS(t testing.TB, srv *embedded.Server, name string) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(Conn(t, srv, name))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// Encode builds the headers and body of an event for turn, as a producer would.
func Encode(t testing.TB, turn string, seq int, d schemas.Data) (nats.Header, []byte) {
	t.Helper()
	h, body, err := schemas.Encode(schemas.Meta{Source: "/test", Tenant: subjects.DefaultTenant, Turn: turn, Seq: seq}, d)
	if err != nil {
		t.Fatal(err)
	}
	return h, body
}

func Publish(t testing.TB, ctx context.Context, js jetstream.JetStream, subject string, h nats.Header, body []byte, opts ...jetstream.PublishOpt) {
	t.Helper()
	if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: subject, Header: h, Data: body}, opts...); err != nil {
		t.Fatalf("Publish %s: %v", subject, err)
	}
}

// PublishUse publishes a well-formed tool_use of turn.
func PublishUse(t testing.TB, ctx context.Context, js jetstream.JetStream, turn string, u *schemas.ToolUse) {
	t.Helper()
	h, body := Encode(t, turn, u.Seq, u)
	Publish(t, ctx, js, subjects.Default().In(subjects.DefaultTenant, turn, subjects.KindUse), h, body, jetstream.WithMsgID(subjects.UseMsgID(subjects.DefaultTenant, turn, u.Seq)))
}

// PublishEnd publishes turn's turn_end with n calls.
func PublishEnd(t testing.TB, ctx context.Context, js jetstream.JetStream, turn string, n int) {
	t.Helper()
	h, body := Encode(t, turn, -1, &schemas.TurnEnd{Calls: n, StopReason: "tool_use"})
	Publish(t, ctx, js, subjects.Default().In(subjects.DefaultTenant, turn, subjects.KindEnd), h, body, jetstream.WithMsgID(subjects.InMsgID(subjects.DefaultTenant, turn, subjects.KindEnd)))
}

// ReadTurn reads a turn through the client: its results in delivery order
// and the turn_done, failing on anything out of order.
func ReadTurn(ctx context.Context, cl *client.Client, turn string) ([]*schemas.ToolResult, *schemas.TurnDone, error) {
	var results []*schemas.ToolResult
	for d, err := range cl.Results(ctx, turn) {
		if err != nil {
			return results, nil, err
		}
		if d.Done != nil {
			if d.Done.Results != len(results) {
				return results, d.Done, fmt.Errorf("turn_done says %d results after %d", d.Done.Results, len(results))
			}
			return results, d.Done, nil
		}
		if d.Result.Seq != len(results) {
			return results, nil, fmt.Errorf("delivery %d has seq %d", len(results), d.Result.Seq)
		}
		results = append(results, d.Result)
	}
	return results, nil, errors.New("results ended without turn_done")
}

// SubjectMsgs reads every message stream holds on subject.
func SubjectMsgs(t testing.TB, ctx context.Context, js jetstream.JetStream, stream, subject string) []*jetstream.RawStreamMsg {
	t.Helper()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	next := uint64(1)
	for {
		m, err := s.GetMsg(ctx, next, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out
		}
		if err != nil {
			t.Fatalf("read %s %s: %v", stream, subject, err)
		}
		out = append(out, m)
		next = m.Sequence + 1
	}
}

// WaitFor polls cond until it holds or the timeout passes.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Store binds the lease bucket on a connection of its own.
func Store(t testing.TB, ctx context.Context, srv *embedded.Server) *lease.Store {
	t.Helper()
	s, err := lease.NewStore(ctx, JS(t, srv, "test-lease"), subjects.Default(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Published records every message published on subject (wildcards
// allowed) from now on, over core NATS: an interest stream keeps a message
// only until its consumer has acked it, so what a stage published cannot
// always be read back. The function returns what was seen so far.
func Published(t testing.TB, js jetstream.JetStream, subject string) func() []*nats.Msg {
	t.Helper()
	nc := js.Conn()
	sub, err := nc.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []*nats.Msg
	return func() []*nats.Msg {
		mu.Lock()
		defer mu.Unlock()
		for {
			m, err := sub.NextMsg(time.Millisecond)
			if err != nil {
				return slices.Clone(seen)
			}
			seen = append(seen, m)
		}
	}
}
