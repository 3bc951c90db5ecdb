package pipeline_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool/testtools"
)

// TestExecutorKeepsItsOwnHooks: an executor config whose only hook is
// Started keeps it rather than getting the pipeline's hooks instead.
func TestExecutorKeepsItsOwnHooks(t *testing.T) {
	srv := testenv.Server(t)
	var started, handled atomic.Int64
	testenv.Pipeline(t, srv, pipeline.Config{
		Tools:    testenv.Registry(t, testtools.Tools()...),
		Executor: executor.Config{Hooks: stage.Hooks{Started: func(stage.CallEvent) { started.Add(1) }}},
		Hooks:    stage.Hooks{Handled: func(stage.Handling) { handled.Add(1) }},
	})
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	calls := []client.Call{{ID: "a", Name: "Noop", Input: json.RawMessage(`{}`)}}
	if err := cl.SubmitCalls(ctx, "t1", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	for d, err := range cl.Results(ctx, "t1") {
		if err != nil {
			t.Fatal(err)
		}
		if d.Done != nil {
			break
		}
	}
	if started.Load() != 1 {
		t.Errorf("executor's Started hook called %d times, want 1", started.Load())
	}
	// A stage's Handled hook runs once its handler has returned, which
	// can be after the client has the result the handler published.
	testenv.WaitFor(t, 5*time.Second, "the pipeline's Handled hook (router, reorder)", func() bool { return handled.Load() > 0 })
}
