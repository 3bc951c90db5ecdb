package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool/testtools"
)

// TestSerialTurnIsPrompt: ten unsafe calls in a row complete without
// waiting on any retry timer (each hand-over is a lease change, not a poll).
func TestSerialTurnIsPrompt(t *testing.T) {
	srv := testenv.Server(t)
	// A recheck far beyond the bound below: only the lease-change
	// notifications can make this test pass.
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...), Executors: 2, Reorders: 2,
		Executor: executor.Config{Recheck: time.Minute}})
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var calls []client.Call
	for i := range 10 {
		calls = append(calls, client.Call{ID: fmt.Sprint(i), Name: "Sleep", Input: json.RawMessage(`{"ms":0}`)})
	}
	start := time.Now()
	if err := cl.SubmitCalls(ctx, "serial", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	var last time.Time
	for d, err := range cl.Results(ctx, "serial") {
		if err != nil {
			t.Fatal(err)
		}
		if d.Done != nil {
			break
		}
		t.Logf("seq %d started +%v finished +%v delivered +%v", d.Result.Seq, d.Result.StartedAt.Sub(start), d.Result.FinishedAt.Sub(start), d.At.Sub(start))
		last = d.At
	}
	if el := last.Sub(start); el > 20*time.Second {
		t.Fatalf("10 serial calls took %v", el)
	}
}
