package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/testtools"
)

// testTimeout bounds each test: generous, since the machine is shared; a
// test waits for what it expects, never for a guessed delay.
const testTimeout = 60 * time.Second

// env starts a server, a pipeline on it with the test tools and extra, and
// a client, all stopped at the test's end.
func env(t *testing.T, cfg pipeline.Config, extra ...*tool.Tool) (*embedded.Server, *client.Client) {
	t.Helper()
	srv := testenv.Server(t)
	cfg.Tools = testenv.Registry(t, append(testtools.Tools(), extra...)...)
	testenv.Pipeline(t, srv, cfg)
	return srv, testenv.Client(t, srv)
}

// waitStored waits until the out stream holds n messages of a turn (its
// results, then turn_done), however many a reader has seen.
func waitStored(t *testing.T, ctx context.Context, srv *embedded.Server, turn string, n int) {
	t.Helper()
	js, sp := testenv.JS(t, srv, "test-read"), subjects.Default()
	testenv.WaitFor(t, testTimeout, fmt.Sprintf("%d messages of turn %s stored", n, turn), func() bool {
		return len(testenv.SubjectMsgs(t, ctx, js, sp.OutStream(), sp.Out(subjects.DefaultTenant, turn))) >= n
	})
}

// testCtx is the test's bounded context.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// readTurn reads a turn through Results, failing the test on an error, a
// result out of call order, a turn_done that miscounts, or anything after it.
func readTurn(t *testing.T, ctx context.Context, cl *client.Client, turn string) ([]*schemas.ToolResult, *schemas.TurnDone) {
	t.Helper()
	var results []*schemas.ToolResult
	var done *schemas.TurnDone
	for d, err := range cl.Results(ctx, turn) {
		switch {
		case done != nil:
			t.Fatalf("turn %s: delivery after turn_done: %+v, %v", turn, d, err)
		case err != nil:
			t.Fatalf("turn %s: %v (after %d results)", turn, err, len(results))
		case d.At.IsZero():
			t.Errorf("turn %s: a delivery without its time of arrival", turn)
		}
		if d.Done != nil {
			done = d.Done
			continue
		}
		if d.Result.Seq != len(results) {
			t.Fatalf("turn %s: delivery %d is call %d", turn, len(results), d.Result.Seq)
		}
		results = append(results, d.Result)
	}
	if done == nil {
		t.Fatalf("turn %s: results ended without turn_done", turn)
	}
	if done.Results != len(results) {
		t.Fatalf("turn %s: turn_done counts %d results, %d came", turn, done.Results, len(results))
	}
	return results, done
}

// noop is a Noop call: its result is its input, compacted.
func noop(id, input string) client.Call {
	return client.Call{ID: id, Name: "Noop", Input: json.RawMessage(input)}
}

// gate is a test tool whose calls report that they started, then wait
// until the test opens the gate or the call is stopped: a test can act
// while a call is surely running, without guessing how long it takes.
type gate struct {
	started chan struct{}
	open    chan struct{}
	once    sync.Once
}

func newGate() *gate { return &gate{started: make(chan struct{}), open: make(chan struct{})} }

// tool is the gate as the tool Gate: not concurrency-safe, so the calls
// after it wait for it, and stopped by a user interrupt.
func (g *gate) tool() *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Name:        "Gate",
		Description: "Test tool: waits until the test opens the gate.",
		Interrupt:   tool.InterruptCancel,
		Call: func(ctx context.Context, _ json.RawMessage, _ tool.TurnContext, _ tool.Progress) (tool.Result, error) {
			g.once.Do(func() { close(g.started) })
			select {
			case <-g.open:
				return tool.Result{Content: "the gate opened"}, nil
			case <-ctx.Done():
				return tool.Result{}, ctx.Err()
			}
		},
	})
}

// waitStarted waits until a Gate call runs.
func (g *gate) waitStarted(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-g.started:
	case <-ctx.Done():
		t.Fatal("the Gate call never started")
	}
}
