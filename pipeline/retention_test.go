package pipeline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/testtools"
)

// TestFinishedTurnLeavesOnlyItsOut: a turn published before any stage has
// started waits for the router (the in and result streams keep a message
// only while a consumer wants it, and the consumers are made with the
// streams); once the turn is delivered, the in and result streams hold
// nothing of it, its out subject holds its results and turn_done, and its
// lease was last written with the short TTL of a finished turn.
func TestFinishedTurnLeavesOnlyItsOut(t *testing.T) {
	srv := testenv.Server(t)
	sp := subjects.Default()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pipeline.Provision(ctx, testenv.Conn(t, srv, "provision"), sp); err != nil {
		t.Fatal(err)
	}
	cl := testenv.Client(t, srv)
	const turn = "kept"
	calls := []client.Call{
		{Name: "Noop", Input: json.RawMessage(`{"a":1}`)},
		{Name: "Noop", Input: json.RawMessage(`{"b":2}`)},
		{Name: "Sleep", Input: json.RawMessage(`{"ms":5}`)},
	}
	if err := cl.SubmitCalls(ctx, turn, calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	// Only now a pipeline.
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...)})
	results, done, err := testenv.ReadTurn(ctx, cl, turn)
	if err != nil || len(results) != len(calls) || done.Results != len(calls) {
		t.Fatalf("turn: %v, %d results, done %+v", err, len(results), done)
	}

	js, err := jetstream.New(testenv.Conn(t, srv, "inspect"))
	if err != nil {
		t.Fatal(err)
	}
	held := func(stream, filter string) uint64 {
		s, err := js.Stream(ctx, stream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		for _, c := range info.State.Subjects {
			n += c
		}
		return n
	}
	// The turn's result subjects: its calls' and its end marker.
	turnResults := strings.TrimSuffix(sp.ResultEnd(subjects.DefaultTenant, turn), "end") + "*"
	testenv.WaitFor(t, 10*time.Second, "the in and result streams to let the turn go", func() bool {
		return held(sp.InStream(), sp.In(subjects.DefaultTenant, turn, "*")) == 0 &&
			held(sp.ResultStream(), turnResults) == 0
	})
	// The turn's calls carried its count, so its last result ends it.
	if n := held(sp.OutStream(), sp.Out(subjects.DefaultTenant, turn)); n != uint64(len(calls)) {
		t.Errorf("out subject holds %d messages, want %d results, the last ending the turn", n, len(calls))
	}
	kv, err := js.Stream(ctx, "KV_"+sp.LeaseBucket())
	if err != nil {
		t.Fatal(err)
	}
	// The last call's done write comes after its result, so after the
	// turn could be read whole.
	var m *jetstream.RawStreamMsg
	testenv.WaitFor(t, 10*time.Second, "the lease to be written complete", func() bool {
		var err error
		m, err = kv.GetLastMsgForSubject(ctx, sp.LeaseSubject(subjects.DefaultTenant, turn))
		if err != nil {
			return false
		}
		l, err := schemas.DecodeLease(m.Data)
		return err == nil && lease.Complete(l)
	})
	if got := m.Header.Get("Nats-TTL"); got != lease.FinishedTTL.String() {
		t.Errorf("the finished lease's TTL is %q, want %s", got, lease.FinishedTTL)
	}
}
