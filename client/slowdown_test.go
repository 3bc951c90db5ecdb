package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/testtools"
)

// TestSlowDownWhenInStreamFull: the in stream holds at most MaxPending
// events waiting for a router. With no router, a turn beyond the bound is
// refused with ErrSlowDown once its context ends, and nothing waits
// client-side; with a router draining the stream, a turn twice the bound
// is slowed down, not refused, and every turn — the refused one sent again
// — completes once.
func TestSlowDownWhenInStreamFull(t *testing.T) {
	const bound = 3
	srv := testenv.Server(t)
	sp := subjects.Default()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jetstream.New(testenv.Conn(t, srv, "provision"))
	if err != nil {
		t.Fatal(err)
	}
	if err := provision.Streams(ctx, js, sp, provision.Config{MaxPending: bound}); err != nil {
		t.Fatal(err)
	}
	cl := testenv.Client(t, srv)
	calls := func(n int) []client.Call {
		var cs []client.Call
		for i := range n {
			cs = append(cs, client.Call{Name: "Noop", Input: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
		}
		return cs
	}
	// Three calls, carrying their count (no turn_end): the bound exactly.
	if err := cl.SubmitCalls(ctx, "fits", calls(3), client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	err = cl.SubmitCalls(short, "refused", calls(1), client.TurnOptions{})
	stop()
	if !errors.Is(err, client.ErrSlowDown) {
		t.Fatalf("a turn past the bound with no router: %v, want ErrSlowDown", err)
	}

	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...), Provision: provision.Config{MaxPending: bound}})
	if err := cl.SubmitCalls(ctx, "slowed", calls(2*bound), client.TurnOptions{}); err != nil {
		t.Fatalf("a turn twice the bound with a router: %v", err)
	}
	if err := cl.SubmitCalls(ctx, "refused", calls(1), client.TurnOptions{}); err != nil {
		t.Fatalf("the refused turn sent again: %v", err)
	}
	for turn, n := range map[string]int{"fits": 3, "refused": 1, "slowed": 2 * bound} {
		results, done, err := testenv.ReadTurn(ctx, cl, turn)
		if err != nil || len(results) != n || done.Results != n {
			t.Errorf("turn %s: %v, %d results, done %+v; want %d", turn, err, len(results), done, n)
		}
	}
}
