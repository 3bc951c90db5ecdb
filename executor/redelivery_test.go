package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/testtools"
)

// blocker is the Block tool as one worker hosts it: each call signals that
// it started, then blocks until the test releases it.
type blocker struct {
	name    string
	runs    atomic.Int32
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

// Release lets every call of b return.
func (b *blocker) Release() { b.once.Do(func() { close(b.release) }) }

func newBlocker(name string) *blocker {
	return &blocker{name: name, started: make(chan struct{}, 16), release: make(chan struct{})}
}

// roFlag reads {"ro": bool}: the call is read-only (and safe) exactly then.
func roFlag(input json.RawMessage) (bool, error) {
	var in struct {
		RO bool `json:"ro"`
	}
	err := json.Unmarshal(input, &in)
	return in.RO, err
}

func (b *blocker) tool(t *testing.T) *tool.Tool {
	t.Helper()
	tl, err := tool.Build(tool.Definition{
		Name:            "Block",
		InputSchema:     json.RawMessage(`{"type":"object","properties":{"ro":{"type":"boolean"}},"required":["ro"],"additionalProperties":false}`),
		ConcurrencySafe: roFlag,
		ReadOnly:        roFlag,
		Call: func(ctx context.Context, _ json.RawMessage, _ tool.TurnContext, _ tool.Progress) (tool.Result, error) {
			b.runs.Add(1)
			b.started <- struct{}{}
			select {
			case <-b.release:
				return tool.Result{Content: "released on " + b.name}, nil
			case <-ctx.Done():
				return tool.Result{}, ctx.Err()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// worker is one executor run by the test on its own connection.
type worker struct {
	nc     *nats.Conn
	cancel context.CancelFunc
	done   chan error
}

func startWorker(t *testing.T, srv *embedded.Server, id string, b *blocker) *worker {
	t.Helper()
	nc, err := srv.Connect(id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	cfg := executor.Config{
		Space:       sp,
		Tools:       testenv.Registry(t, b.tool(t), testtools.Noop()),
		WorkerID:    id,
		Deadline:    3 * time.Second,
		CallTimeout: time.Minute,
		Recheck:     250 * time.Millisecond,
		Consumer:    provision.ConsumerConfig{AckWait: 3 * time.Second},
	}
	ctx, cancel := context.WithCancel(context.Background())
	e, err := executor.New(ctx, nc, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	w := &worker{nc: nc, cancel: cancel, done: make(chan error, 1)}
	go func() { w.done <- e.Run(ctx) }()
	return w
}

// wait waits for the worker's Run to return.
func (w *worker) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case err := <-w.done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Logf("worker run: %v", err)
		}
	case <-time.After(timeout):
		t.Errorf("worker did not stop within %v", timeout)
	}
}

func waitStarted(t *testing.T, b *blocker, timeout time.Duration) {
	t.Helper()
	select {
	case <-b.started:
	case <-time.After(timeout):
		t.Fatalf("Block did not start on %s within %v", b.name, timeout)
	}
}

// TestWorkerDiesMidCall: a worker dies (its connection drops, as a killed
// process's does) while a call runs. The call's message is redelivered to
// a second worker after AckWait, which finds the claim's deadline passed:
// a read-only call runs again (attempt 2), any other call is answered
// "execution interrupted; outcome unknown" and not run twice. Either way
// the turn gets exactly one result per call, then turn_done.
func TestWorkerDiesMidCall(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out AckWait and the claim deadline (several seconds)")
	}
	for _, ro := range []bool{true, false} {
		t.Run(fmt.Sprintf("readOnly=%v", ro), func(t *testing.T) {
			srv := testenv.Server(t)
			routed := newBlocker("router")
			startPipeline(t, srv, pipeline.Config{
				Tools:     testenv.Registry(t, routed.tool(t), testtools.Noop()),
				Executors: -1,
			})
			cl := testenv.Client(t, srv)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			a, b := newBlocker("worker-a"), newBlocker("worker-b")
			wa := startWorker(t, srv, "worker-a", a)
			turn := fmt.Sprintf("dies_ro_%v", ro)
			calls := []client.Call{
				{ID: "block", Name: "Block", Input: json.RawMessage(fmt.Sprintf(`{"ro":%v}`, ro))},
				{ID: "after", Name: "Noop", Input: json.RawMessage(`{"after":true}`)},
			}
			if err := cl.SubmitCalls(ctx, turn, calls, client.TurnOptions{}); err != nil {
				t.Fatal(err)
			}
			waitStarted(t, a, 15*time.Second)
			store := mustStore(t, ctx, srv)
			l, _, err := store.Get(ctx, tenant, turn)
			if err != nil {
				t.Fatal(err)
			}
			if c := l.Calls[0]; c.State != schemas.CallRunning || c.Worker != "worker-a" || c.Attempts != 1 || c.ReadOnly != ro {
				t.Fatalf("lease of the running call: %+v", c)
			}

			// Kill worker A: its connection goes, as a dead process's does,
			// and its receive loop stops. Its call is still blocked inside
			// the tool, like a process frozen mid-call.
			killed := time.Now()
			wa.nc.Close()
			wa.cancel()
			wb := startWorker(t, srv, "worker-b", b)
			defer func() {
				wb.cancel()
				wb.wait(t, 15*time.Second)
			}()
			defer func() {
				// Let A's orphaned call return: it must not publish anything.
				// Its writes are retried for a while on the closed
				// connection (see TestRunReturnsAfterConnectionClosed),
				// so A's Run is not waited for here.
				a.Release()
				select {
				case <-wa.done:
				case <-time.After(2 * time.Second):
					t.Logf("worker-a's Run has not returned 2s after its orphaned call was released")
				}
			}()

			if ro {
				waitStarted(t, b, 20*time.Second)
				t.Logf("worker B took the call over %v after A died", time.Since(killed).Round(10*time.Millisecond))
				b.Release()
			}
			results, done, err := readTurn(ctx, cl, turn)
			if err != nil {
				t.Fatalf("%v (%d results)", err, len(results))
			}
			if done.Results != 2 || len(results) != 2 {
				t.Fatalf("%d results, turn_done %d", len(results), done.Results)
			}
			r := results[0]
			t.Logf("result 0: %+v", r)
			if r.Worker != "worker-b" || r.ToolUseID != "block" {
				t.Errorf("result 0 from %s for %s, want worker-b for block", r.Worker, r.ToolUseID)
			}
			if ro {
				if r.IsError || r.Content != "released on worker-b" || r.Attempt != 2 {
					t.Errorf("read-only call: %+v, want it run again by worker-b as attempt 2", r)
				}
				if n := b.runs.Load(); n != 1 {
					t.Errorf("worker-b ran the read-only call %d times", n)
				}
			} else {
				if !r.IsError || !strings.Contains(r.Content, "execution interrupted; outcome unknown") {
					t.Errorf("non-read-only call: %+v, want the interrupted error", r)
				}
				if n := b.runs.Load(); n != 0 {
					t.Errorf("worker-b ran a call that is not read-only again (%d times)", n)
				}
			}
			if n := a.runs.Load(); n != 1 {
				t.Errorf("worker-a ran Block %d times", n)
			}
			if n := routed.runs.Load(); n != 0 {
				t.Errorf("the router's copy of the tool ran %d times", n)
			}
			if r := results[1]; r.IsError || r.Content != `{"after":true}` {
				t.Errorf("result 1: %+v", r)
			}

			// After A's orphaned call returns, nothing changes: its result,
			// if it is stored at all, is taken off TW_RESULT by reorder,
			// and the out subject is as read.
			a.Release()
			time.Sleep(500 * time.Millisecond)
			check := jsFor(t, srv, "test-check")
			waitFor(t, 10*time.Second, "TW_RESULT to hold nothing of the turn", func() bool {
				return len(subjectMsgs(t, ctx, check, sp.ResultStream(), sp.Result(tenant, turn, 0))) == 0 &&
					len(subjectMsgs(t, ctx, check, sp.ResultStream(), sp.Result(tenant, turn, 1))) == 0
			})
			nres, ends := 0, 0
			for _, m := range subjectMsgs(t, ctx, jsFor(t, srv, "test-check-out"), sp.OutStream(), sp.Out(tenant, turn)) {
				meta, d, err := schemas.Decode(m.Header, m.Data)
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := d.(*schemas.ToolResult); ok {
					nres++
				}
				if schemas.DoneOf(meta, d) != nil {
					ends++
				}
			}
			if nres != 2 || ends != 1 {
				t.Errorf("out subject holds %d results and %d ends of the turn, want 2 and 1", nres, ends)
			}
			l, _, err = store.Get(ctx, tenant, turn)
			if err != nil {
				t.Fatal(err)
			}
			if c := l.Calls[0]; c.State != schemas.CallDone {
				t.Errorf("lease of the call after the turn: %+v", c)
			}
		})
	}
}

// TestDispatchWithoutLeaseNotRun: a well-formed dispatch for a turn that has
// no lease (never routed, or the lease expired) cannot be ordered against
// its siblings, so the worker answers it with an error and never runs it.
func TestDispatchWithoutLeaseNotRun(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Noop()), Executors: -1})
	b := newBlocker("worker-a")
	w := startWorker(t, srv, "worker-a", b)
	defer func() {
		b.Release()
		w.cancel()
		w.wait(t, 15*time.Second)
	}()
	js := jsFor(t, srv, "test-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	const turn = "no_lease"
	h, body := encode(t, turn, 0, &schemas.Dispatch{Seq: 0, ToolUseID: "toolu_0", Tool: "Block", Input: schemas.RawJSON(`{"ro":true}`), Pool: "default"})
	publish(t, ctx, js, sp.Exec(tenant, "default", turn), h, body)
	var msgs []*jetstream.RawStreamMsg
	waitFor(t, 10*time.Second, "the call's result", func() bool {
		msgs = subjectMsgs(t, ctx, js, sp.OutStream(), sp.Out(tenant, turn))
		return len(msgs) >= 1
	})
	_, data, err := schemas.Decode(msgs[0].Header, msgs[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	r := data.(*schemas.ToolResult)
	if !r.IsError || r.ToolUseID != "toolu_0" || r.Worker != "worker-a" {
		t.Errorf("result: %+v", r)
	}
	if n := b.runs.Load(); n != 0 {
		t.Errorf("the call ran %d times without a lease", n)
	}
}

// TestRunReturnsAfterConnectionClosed: a worker whose connection is closed
// for good (nats.Conn.Close, or a client that gave up reconnecting) cannot
// publish anything any more; once its receive loop is stopped, Run must
// return soon after its calls do, not keep retrying writes that can never
// succeed.
func TestRunReturnsAfterConnectionClosed(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, newBlocker("router").tool(t)), Executors: -1})
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := newBlocker("worker-a")
	wa := startWorker(t, srv, "worker-a", a)
	if err := cl.SubmitCalls(ctx, "closed", []client.Call{{Name: "Block", Input: json.RawMessage(`{"ro":false}`)}}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, a, 15*time.Second)
	wa.nc.Close()
	wa.cancel()
	a.Release()
	select {
	case <-wa.done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run still running 10s after its connection closed and its call returned")
	}
}
