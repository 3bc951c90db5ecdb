package router_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/builtin"
	"github.com/toolwire/toolwire/tool/testtools"
)

// TestCallAfterTurnEndNotRun: a tool_use at or past the count its turn's
// end gave must not run — its side effects would happen and its result
// never be delivered. It is answered (the result is published on its
// result subject), dead-lettered with the reason and counted; the turn completes
// with the calls it had, before and after the late one arrives.
func TestCallAfterTurnEndNotRun(t *testing.T) {
	srv := testenv.Server(t)
	dir := t.TempDir()
	p := startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, append(builtin.Tools(), testtools.Tools()...)...), WorkDir: dir})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const turn = "late"
	bash := func(seq int, file string) *schemas.ToolUse {
		return &schemas.ToolUse{Seq: seq, ToolUseID: "toolu_" + file, Name: "Bash", Input: schemas.RawJSON(`{"command":"touch ` + file + `"}`), Complete: true}
	}
	publishUse(t, ctx, js, turn, bash(0, "first"))
	publishEnd(t, ctx, js, turn, 1)
	results, done, err := readTurn(ctx, cl, turn)
	if err != nil || len(results) != 1 || done.Results != 1 {
		t.Fatalf("turn: %v, %d results", err, len(results))
	}
	// After the turn is done: seq 1 (at the count) and seq 7 (past it).
	answers := []func() []*nats.Msg{published(t, js, sp.Result(tenant, turn, 1)), published(t, js, sp.Result(tenant, turn, 7))}
	publishUse(t, ctx, js, turn, bash(1, "at_end"))
	publishUse(t, ctx, js, turn, bash(7, "past_end"))

	for i, seq := range []int{1, 7} {
		var m *nats.Msg
		waitFor(t, 10*time.Second, "the answer of the late call", func() bool {
			if got := answers[i](); len(got) > 0 {
				m = got[0]
			}
			return m != nil
		})
		_, data, err := schemas.Decode(m.Header, m.Data)
		res, ok := data.(*schemas.ToolResult)
		if err != nil || !ok || !res.IsError || !strings.Contains(res.Content, "came after its turn's end") {
			t.Errorf("stored answer of seq %d: %v %+v", seq, err, data)
		}
	}
	waitFor(t, 10*time.Second, "two dead letters", func() bool {
		return len(subjectMsgs(t, ctx, js, sp.DLQStream(), sp.DLQ(tenant, subjects.StageRouter))) == 2
	})
	for _, m := range subjectMsgs(t, ctx, js, sp.DLQStream(), sp.DLQ(tenant, subjects.StageRouter)) {
		if r := m.Header.Get(schemas.HeaderDLQReason); !strings.Contains(r, "came after its turn's end, which counted 1 calls") {
			t.Errorf("dead letter reason %q", r)
		}
	}
	if n := p.LateCalls(); n != 2 {
		t.Errorf("late calls counted: %d, want 2", n)
	}
	for _, f := range []string{"at_end", "past_end"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("the late call that touches %s ran", f)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "first")); err != nil {
		t.Errorf("the turn's own call did not run: %v", err)
	}
}

// TestCallAfterExpiredTurnNotRun: once a completed turn's lease has expired,
// a tool_use for it (a replay, a late retry) must not bring the turn back
// and run: its out subject and end marker say it is over.
func TestCallAfterExpiredTurnNotRun(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a lease to expire")
	}
	srv := testenv.Server(t)
	dir := t.TempDir()
	startPipeline(t, srv, pipeline.Config{
		Tools: testenv.Registry(t, builtin.Tools()...), WorkDir: dir,
		Provision: provision.Config{LeaseTTL: time.Second},
	})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const turn = "expired"
	use := &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_0", Name: "Bash", Input: schemas.RawJSON(`{"command":"echo run >> runs"}`), Complete: true}
	publishUse(t, ctx, js, turn, use)
	publishEnd(t, ctx, js, turn, 1)
	if _, _, err := readTurn(ctx, cl, turn); err != nil {
		t.Fatal(err)
	}
	store := mustStore(t, ctx, srv)
	waitFor(t, 30*time.Second, "the lease to expire", func() bool {
		_, _, err := store.Get(ctx, tenant, turn)
		return errors.Is(err, jetstream.ErrKeyNotFound)
	})
	// The turn's end and the same call again, past the dedup of their
	// first copies (new ids): the end must not bring the turn back for the
	// call to run on.
	h, body := encode(t, turn, -1, &schemas.TurnEnd{Calls: 1, StopReason: "tool_use"})
	publish(t, ctx, js, sp.In(tenant, turn, subjects.KindEnd), h, body, jetstream.WithMsgID("replayed-end"))
	h, body = encode(t, turn, 0, use)
	publish(t, ctx, js, sp.In(tenant, turn, subjects.KindUse), h, body, jetstream.WithMsgID("replayed-0"))
	waitFor(t, 10*time.Second, "the dead letter of the replayed call", func() bool {
		for _, m := range subjectMsgs(t, ctx, js, sp.DLQStream(), sp.DLQ(tenant, subjects.StageRouter)) {
			if strings.Contains(m.Header.Get(schemas.HeaderDLQReason), "the turn is over") {
				return true
			}
		}
		return false
	})
	if _, _, err := store.Get(ctx, tenant, turn); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Errorf("the replayed events brought the turn's lease back: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "runs"))
	if got := strings.Count(string(b), "run"); got != 1 {
		t.Errorf("the call ran %d times, want once", got)
	}
}

// TestLateCallWhileTurnRuns: a call past the end that arrives while the
// turn's last call still runs is answered for the record but never
// delivered: the agent gets exactly the turn's calls, then turn_done.
func TestLateCallWhileTurnRuns(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...)})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const turn = "late_running"
	first, late := published(t, js, sp.Result(tenant, turn, 0)), published(t, js, sp.Result(tenant, turn, 2))
	publishUse(t, ctx, js, turn, &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_0", Name: "Noop", Input: schemas.RawJSON(`{}`), Complete: true})
	publishUse(t, ctx, js, turn, &schemas.ToolUse{Seq: 1, ToolUseID: "toolu_1", Name: "Sleep", Input: schemas.RawJSON(`{"ms":600}`), Complete: true})
	publishEnd(t, ctx, js, turn, 2)
	waitFor(t, 10*time.Second, "call 0's result", func() bool {
		return len(first()) > 0
	})
	publishUse(t, ctx, js, turn, &schemas.ToolUse{Seq: 2, ToolUseID: "toolu_2", Name: "Noop", Input: schemas.RawJSON(`{}`), Complete: true})
	waitFor(t, 10*time.Second, "the late call's answer", func() bool {
		return len(late()) > 0
	})
	results, done, err := readTurn(ctx, cl, turn)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || done.Results != 2 {
		t.Fatalf("%d results, turn_done %d; want the turn's 2 (late answer delivered?)", len(results), done.Results)
	}
}

// TestCallAgainWhileReorderBehindNotRun: a turn completes while no reorder
// runs (a restart, a backlog), so nothing reaches its out subject, and its
// complete lease lives only lease.FinishedTTL. The same tool_use coming
// again after that (a redelivery after a lost ack, a producer's retry past
// the dedup window) must not run the call again: the end marker, still in
// the result stream, says the turn is over — or, for a turn whose calls
// carried its count and that has no end marker, the call's own result.
func TestCallAgainWhileReorderBehindNotRun(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a finished lease to expire")
	}
	t.Run("turn_end", func(t *testing.T) { t.Parallel(); callAgainWhileReorderBehind(t, false) })
	t.Run("count_on_the_call", func(t *testing.T) { t.Parallel(); callAgainWhileReorderBehind(t, true) })
}

func callAgainWhileReorderBehind(t *testing.T, counted bool) {
	srv := testenv.Server(t)
	dir := t.TempDir()
	tools := testenv.Registry(t, builtin.Tools()...)
	startPipeline(t, srv, pipeline.Config{Tools: tools, WorkDir: dir, Reorders: -1})
	js := jsFor(t, srv, "test-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	const turn = "again"
	use := &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_0", Name: "Bash", Input: schemas.RawJSON(`{"command":"echo run >> runs"}`), Complete: true}
	if counted {
		use.Calls = 1
	}
	publishUse(t, ctx, js, turn, use)
	if !counted {
		publishEnd(t, ctx, js, turn, 1)
	}
	store := mustStore(t, ctx, srv)
	waitFinishedLeaseGone(t, ctx, store, turn)
	h, body := encode(t, turn, 0, use)
	publish(t, ctx, js, sp.In(tenant, turn, subjects.KindUse), h, body)
	waitFor(t, 10*time.Second, "the dead letter of the call sent again", func() bool {
		for _, m := range subjectMsgs(t, ctx, js, sp.DLQStream(), sp.DLQ(tenant, subjects.StageRouter)) {
			if strings.Contains(m.Header.Get(schemas.HeaderDLQReason), "the turn is over") {
				return true
			}
		}
		return false
	})
	b, _ := os.ReadFile(filepath.Join(dir, "runs"))
	if got := strings.Count(string(b), "run"); got != 1 {
		t.Errorf("the call ran %d times, want once", got)
	}
	// The turn completes once a reorder runs, with the call's one result.
	startPipeline(t, srv, pipeline.Config{Tools: tools, WorkDir: dir, Routers: -1, Executors: -1})
	results, done, err := readTurn(ctx, testenv.Client(t, srv), turn)
	if err != nil || done.Results != 1 || len(results) != 1 || results[0].IsError {
		t.Errorf("the turn: %v, %d results %+v, done %+v", err, len(results), results, done)
	}
}

// TestLateTurnEventDoesNotReviveCountedTurn: a turn whose calls carried its
// count completes while no reorder runs, and its finished lease expires.
// A turn_end or a discard that comes then (a producer that sends both, a
// retry) finds the turn over by its stored result, though it has no end
// marker: it makes no new lease, so the call sent again after it is not
// run a second time.
func TestLateTurnEventDoesNotReviveCountedTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a finished lease to expire")
	}
	t.Run("turn_end", func(t *testing.T) { t.Parallel(); lateTurnEvent(t, subjects.KindEnd) })
	t.Run("discard", func(t *testing.T) { t.Parallel(); lateTurnEvent(t, subjects.KindDiscard) })
}

// waitFinishedLeaseGone waits for the turn to complete in its lease, then
// for the finished lease to expire.
func waitFinishedLeaseGone(t *testing.T, ctx context.Context, store *lease.Store, turn string) {
	t.Helper()
	waitFor(t, 10*time.Second, "the turn to complete in its lease", func() bool {
		l, _, err := store.Get(ctx, tenant, turn)
		return err == nil && lease.Complete(l)
	})
	waitFor(t, 2*lease.FinishedTTL+10*time.Second, "the finished lease to expire", func() bool {
		_, _, err := store.Get(ctx, tenant, turn)
		return errors.Is(err, jetstream.ErrKeyNotFound)
	})
}

func lateTurnEvent(t *testing.T, kind string) {
	srv := testenv.Server(t)
	dir := t.TempDir()
	startPipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, builtin.Tools()...), WorkDir: dir, Reorders: -1})
	js := jsFor(t, srv, "test-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	const turn = "revived"
	use := &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_0", Name: "Bash", Input: schemas.RawJSON(`{"command":"echo run >> runs"}`), Complete: true, Calls: 1}
	publishUse(t, ctx, js, turn, use)
	store := mustStore(t, ctx, srv)
	waitFinishedLeaseGone(t, ctx, store, turn)
	var data schemas.Data = &schemas.TurnEnd{Calls: 1}
	if kind == subjects.KindDiscard {
		data = &schemas.TurnDiscard{}
	}
	h, body := encode(t, turn, -1, data)
	publish(t, ctx, js, sp.In(tenant, turn, kind), h, body)
	h, body = encode(t, turn, 0, use)
	publish(t, ctx, js, sp.In(tenant, turn, subjects.KindUse), h, body)
	waitFor(t, 10*time.Second, "the dead letter of the call sent again", func() bool {
		return len(subjectMsgs(t, ctx, js, sp.DLQStream(), sp.DLQ(tenant, subjects.StageRouter))) > 0
	})
	if _, _, err := store.Get(ctx, tenant, turn); err == nil {
		t.Errorf("the late %s made the expired turn a new lease", kind)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "runs"))
	if got := strings.Count(string(b), "run"); got != 1 {
		t.Errorf("the call ran %d times, want once", got)
	}
}

// TestEndAfterLeaseExpiredMidTurn: a turn's lease expires before its end
// comes (idle past its TTL) while one result was delivered. A call of it
// that comes then is answered, not run (nothing can order it any more),
// but its turn_end still reaches reorder, so the turn completes: the call
// whose result never came is answered at the gap deadline. For a turn
// whose calls carry its count, the late call passes the count on instead.
func TestEndAfterLeaseExpiredMidTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a lease to expire")
	}
	t.Run("turn_end", func(t *testing.T) { t.Parallel(); endAfterLeaseExpired(t, false) })
	t.Run("count_on_the_call", func(t *testing.T) { t.Parallel(); endAfterLeaseExpired(t, true) })
}

func endAfterLeaseExpired(t *testing.T, counted bool) {
	srv := testenv.Server(t)
	dir := t.TempDir()
	startPipeline(t, srv, pipeline.Config{
		Tools: testenv.Registry(t, builtin.Tools()...), WorkDir: dir,
		Provision: provision.Config{LeaseTTL: time.Second}, GapDeadline: time.Second,
	})
	js := jsFor(t, srv, "test-publisher")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const turn = "expired_open"
	bash := func(seq int) *schemas.ToolUse {
		u := &schemas.ToolUse{Seq: seq, ToolUseID: fmt.Sprintf("toolu_%d", seq), Name: "Bash", Input: schemas.RawJSON(`{"command":"echo run >> runs"}`), Complete: true}
		if counted {
			u.Calls = 2
		}
		return u
	}
	publishUse(t, ctx, js, turn, bash(0))
	waitFor(t, 10*time.Second, "call 0's result on the out subject", func() bool {
		return len(subjectMsgs(t, ctx, js, sp.OutStream(), sp.Out(tenant, turn))) == 1
	})
	store := mustStore(t, ctx, srv)
	waitFor(t, 30*time.Second, "the lease to expire", func() bool {
		_, _, err := store.Get(ctx, tenant, turn)
		return errors.Is(err, jetstream.ErrKeyNotFound)
	})
	publishUse(t, ctx, js, turn, bash(1))
	if !counted {
		publishEnd(t, ctx, js, turn, 2)
	}
	results, done, err := readTurn(ctx, cl, turn)
	if err != nil {
		t.Fatalf("the turn did not complete: %v (%d results)", err, len(results))
	}
	if done.Results != 2 || len(results) != 2 || results[0].IsError || !results[1].IsError {
		t.Errorf("turn_done %+v, results %+v", done, results)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "runs"))
	if got := strings.Count(string(b), "run"); got != 1 {
		t.Errorf("the calls ran %d times, want once (call 0 only)", got)
	}
}
