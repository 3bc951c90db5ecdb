package reorder_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool/testtools"
)

// startReorders runs n reorder instances and no other stage.
func startReorders(t *testing.T, srv *embedded.Server, n int) {
	t.Helper()
	startPipeline(t, srv, pipeline.Config{
		Tools:   testenv.Registry(t, testtools.Tools()...),
		Routers: -1, Executors: -1, Reorders: n,
	})
}

// resultMsg is one message an executor (or the router) would put on TW_RESULT.
type resultMsg struct {
	turn string
	seq  int // -1: the end marker
	n    int // the turn's number of calls, for the end marker
	// counted: the result carries n, as the result of a turn whose calls
	// carried their count does.
	counted bool
}

func natsMsg(subject string, h nats.Header, body []byte) *nats.Msg {
	return &nats.Msg{Subject: subject, Header: h, Data: body}
}

func content(turn string, seq int) string { return fmt.Sprintf("result %d of %s", seq, turn) }

// publishResult publishes a call's result as an executor does.
func publishResult(ctx context.Context, js jetstream.JetStream, turn string, seq int) error {
	return publishCounted(ctx, js, turn, seq, 0)
}

// publishCounted publishes a call's result carrying its turn's count
// (0: none), as an executor does for a turn whose count it knows.
func publishCounted(ctx context.Context, js jetstream.JetStream, turn string, seq, calls int) error {
	r := &schemas.ToolResult{
		Seq: seq, ToolUseID: fmt.Sprintf("toolu_%s_%d", turn, seq), Name: "Noop", Content: content(turn, seq),
		StartedAt: time.Now().UTC(), FinishedAt: time.Now().UTC(), Worker: "test", Attempt: 1, TurnCalls: calls,
	}
	h, body, err := schemas.Encode(schemas.Meta{Source: "/test/executor", Tenant: tenant, Turn: turn, Seq: seq}, r)
	if err != nil {
		return err
	}
	return publishOnce(ctx, js, sp.Result(tenant, turn, seq), h, body)
}

// publishOnce publishes to a result subject as the stages do: a refusal
// is fine when the subject holds its one message; when reorder took that
// message off in between, the publish is tried again (and reorder turns
// the copy away).
func publishOnce(ctx context.Context, js jetstream.JetStream, subject string, h nats.Header, body []byte) error {
	var err error
	for range 3 {
		if _, err = js.PublishMsg(ctx, natsMsg(subject, h, body)); err == nil {
			return nil
		}
		s, serr := js.Stream(ctx, sp.ResultStream())
		if serr != nil {
			return serr
		}
		if _, gerr := s.GetLastMsgForSubject(ctx, subject); gerr == nil {
			return nil
		}
	}
	return err
}

// publishEndMarker publishes a turn's end marker as the router does.
func publishEndMarker(ctx context.Context, js jetstream.JetStream, turn string, n int) error {
	h, body, err := schemas.Encode(schemas.Meta{Source: "/test/router", Tenant: tenant, Turn: turn, Seq: -1}, &schemas.TurnEnd{Calls: n, StopReason: "tool_use"})
	if err != nil {
		return err
	}
	return publishOnce(ctx, js, sp.ResultEnd(tenant, turn), h, body)
}

func (m resultMsg) publish(ctx context.Context, js jetstream.JetStream) error {
	if m.seq < 0 {
		return publishEndMarker(ctx, js, m.turn, m.n)
	}
	if m.counted {
		return publishCounted(ctx, js, m.turn, m.seq, m.n)
	}
	return publishResult(ctx, js, m.turn, m.seq)
}

// checkOut reads the turn's out subject raw: exactly n results in strict
// seq order, each once, then one turn_done of n, and nothing after it.
func checkOut(t *testing.T, ctx context.Context, js jetstream.JetStream, turn string, n int) {
	t.Helper()
	msgs := subjectMsgs(t, ctx, js, sp.OutStream(), sp.Out(tenant, turn))
	// The turn's end is its own turn_done, or its last result marked as
	// the turn's completion (ce-turndone): n+1 messages or n.
	if len(msgs) != n+1 && (len(msgs) != n || n == 0) {
		t.Errorf("turn %s: %d out messages, want %d results and the turn's end", turn, len(msgs), n)
	}
	done := 0
	for i, m := range msgs {
		meta, data, err := schemas.Decode(m.Header, m.Data)
		if err != nil {
			t.Errorf("turn %s: out message %d does not decode: %v", turn, i, err)
			continue
		}
		if meta.Turn != turn || meta.Tenant != tenant {
			t.Errorf("turn %s: out message %d is of %s/%s", turn, i, meta.Tenant, meta.Turn)
		}
		if d := schemas.DoneOf(meta, data); d != nil {
			done++
			if i != len(msgs)-1 || d.Results != n {
				t.Errorf("turn %s: the turn's end (%d results) is out message %d of %d, want the last with %d results", turn, d.Results, i, len(msgs), n)
			}
		}
		switch d := data.(type) {
		case *schemas.ToolResult:
			if i >= n {
				t.Errorf("turn %s: out message %d is result %d past the turn's %d calls", turn, i, d.Seq, n)
			}
			if d.Seq != i || meta.Seq != i {
				t.Errorf("turn %s: out message %d is result %d (ce-seq %d)", turn, i, d.Seq, meta.Seq)
			}
			if d.Content != content(turn, d.Seq) {
				t.Errorf("turn %s: result %d content %q", turn, d.Seq, d.Content)
			}
		case *schemas.TurnDone:
		default:
			t.Errorf("turn %s: out message %d is %s", turn, i, data.EventType())
		}
	}
	if done != 1 {
		t.Errorf("turn %s: %d messages end the turn, want 1", turn, done)
	}
}

// readAll reads the turn through the client and holds it to one result per
// seq, in order, then turn_done of n.
func readAll(ctx context.Context, cl *client.Client, turn string, n int) error {
	results, done, err := readTurn(ctx, cl, turn)
	if err != nil {
		return fmt.Errorf("%w (%d results)", err, len(results))
	}
	if len(results) != n || done.Results != n {
		return fmt.Errorf("%d results, turn_done %d; want %d", len(results), done.Results, n)
	}
	for i, r := range results {
		if r.Content != content(turn, i) {
			return fmt.Errorf("result %d: %q", i, r.Content)
		}
	}
	return nil
}

// TestReorderRandomOrder: reorder instances alone, fed results of many turns
// straight onto TW_RESULT in random order (the end marker anywhere, some
// results twice), deliver each turn exactly once, in order, then turn_done.
// A third of the turns have no end marker: every result carries the count,
// as for a turn whose calls carried it. Another third have both, with the
// count on some of their results only (an end that came while some of the
// calls ran).
func TestReorderRandomOrder(t *testing.T) { reorderRandom(t, 40, 2) }

// TestReorderRandomOrderLarge is TestReorderRandomOrder with more turns and
// three instances racing for them.
func TestReorderRandomOrderLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("about 2000 results; slow under -race")
	}
	reorderRandom(t, 200, 3)
}

func reorderRandom(t *testing.T, turns, instances int) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 11))

	srv := testenv.Server(t)
	startReorders(t, srv, instances)
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	calls := map[string]int{}
	counted := map[string]bool{} // every result carries the count
	var msgs []resultMsg
	for i := range turns {
		turn := fmt.Sprintf("ro_%d", i)
		n := rng.IntN(13)
		if i%25 == 0 {
			n = 0 // a turn without calls: end marker only
		}
		calls[turn] = n
		mode := rng.IntN(3) // 0: end marker; 1: counted results; 2: both
		if n == 0 {
			mode = 0
		}
		for seq := range n {
			m := resultMsg{turn: turn, seq: seq, n: n, counted: mode == 1 || (mode == 2 && rng.IntN(2) == 0)}
			msgs = append(msgs, m)
			if rng.IntN(5) == 0 {
				msgs = append(msgs, m)
			}
		}
		if mode == 1 {
			counted[turn] = true
			continue
		}
		msgs = append(msgs, resultMsg{turn: turn, seq: -1, n: n})
		if rng.IntN(10) == 0 {
			msgs = append(msgs, resultMsg{turn: turn, seq: -1, n: n})
		}
	}
	rng.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })

	// Readers first, so some turns are followed live and some read back.
	var wg sync.WaitGroup
	errs := make(chan error, turns)
	sem := make(chan struct{}, 32)
	for turn, n := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := readAll(ctx, cl, turn, n); err != nil {
				errs <- fmt.Errorf("turn %s (%d calls): %w", turn, n, err)
			}
		}()
	}

	const publishers = 4
	var pwg sync.WaitGroup
	for p := range publishers {
		js := jsFor(t, srv, fmt.Sprintf("test-publisher-%d", p))
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			for i := p; i < len(msgs); i += publishers {
				if err := msgs[i].publish(ctx, js); err != nil {
					errs <- fmt.Errorf("publish %+v: %w", msgs[i], err)
					return
				}
				if i%97 == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	pwg.Wait()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	js := jsFor(t, srv, "test-check")
	for turn, n := range calls {
		checkOut(t, ctx, js, turn, n)
	}
	// A counted turn's last result ends it: no turn_done of its own.
	for turn := range counted {
		if got := len(subjectMsgs(t, ctx, js, sp.OutStream(), sp.Out(tenant, turn))); got != calls[turn] {
			t.Errorf("counted turn %s: %d out messages, want its %d results, the last ending the turn", turn, got, calls[turn])
		}
	}
	// Late duplicates change nothing.
	for turn, n := range calls {
		if n > 0 {
			if err := publishResult(ctx, js, turn, n-1); err != nil {
				t.Fatal(err)
			}
		}
		if err := publishEndMarker(ctx, js, turn, n); err != nil {
			t.Fatal(err)
		}
	}
	waitIdle(t, ctx, js)
	for turn, n := range calls {
		checkOut(t, ctx, js, turn, n)
	}
}

// waitIdle waits until the reorder consumer has nothing pending.
func waitIdle(t *testing.T, ctx context.Context, js jetstream.JetStream) {
	t.Helper()
	cons, err := js.Consumer(ctx, sp.ResultStream(), sp.ReorderConsumer())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the reorder consumer to have nothing pending", func() bool {
		info, err := cons.Info(ctx)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0
	})
}

// TestReorderEmptyTurn: a turn with no calls is its end marker alone, and
// gives turn_done with 0 results and nothing else.
func TestReorderEmptyTurn(t *testing.T) {
	srv := testenv.Server(t)
	startReorders(t, srv, 2)
	cl := testenv.Client(t, srv)
	js := jsFor(t, srv, "test-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := publishEndMarker(ctx, js, "empty", 0); err != nil {
		t.Fatal(err)
	}
	if err := readAll(ctx, cl, "empty", 0); err != nil {
		t.Fatal(err)
	}
	checkOut(t, ctx, js, "empty", 0)
}

// TestReorderEndFirstThenGapFills: the end marker and the later results come
// first and wait behind a gap; when the gap's result arrives, well after the
// others were retried a few times, the turn completes at once.
func TestReorderEndFirstThenGapFills(t *testing.T) {
	srv := testenv.Server(t)
	startReorders(t, srv, 2)
	cl := testenv.Client(t, srv)
	js := jsFor(t, srv, "test-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const turn, n = "gap", 5
	if err := publishEndMarker(ctx, js, turn, n); err != nil {
		t.Fatal(err)
	}
	for seq := n - 1; seq >= 1; seq-- {
		if err := publishResult(ctx, js, turn, seq); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1500 * time.Millisecond)
	if msgs := subjectMsgs(t, ctx, js, sp.OutStream(), sp.Out(tenant, turn)); len(msgs) != 0 {
		t.Fatalf("%d out messages before result 0 exists", len(msgs))
	}
	filled := time.Now()
	if err := publishResult(ctx, js, turn, 0); err != nil {
		t.Fatal(err)
	}
	if err := readAll(ctx, cl, turn, n); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(filled); el > 10*time.Second {
		t.Errorf("the turn took %v to complete after its gap filled", el)
	}
	checkOut(t, ctx, js, turn, n)
}

// TestCountedTurnAcrossReorders: a turn whose results carry its count has
// no end marker. Its first result goes through one reorder instance, which
// then stops; its last, carrying no count (a call registered before the
// count came), reaches a new instance that never saw the turn. The new one
// finds its view behind the out subject, reads the count the first
// delivered result carries, and completes the turn.
func TestCountedTurnAcrossReorders(t *testing.T) {
	srv := testenv.Server(t)
	js := jsFor(t, srv, "test-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := pipeline.Config{Space: sp, Tools: testenv.Registry(t, testtools.Tools()...), Routers: -1, Executors: -1}
	first, err := pipeline.Start(ctx, srv.Connect, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const turn = "across"
	if err := publishCounted(ctx, js, turn, 0, 2); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "result 0 on the out subject", func() bool {
		return len(subjectMsgs(t, ctx, js, sp.OutStream(), sp.Out(tenant, turn))) == 1
	})
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	startPipeline(t, srv, cfg)
	if err := publishCounted(ctx, js, turn, 1, 0); err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	if err := readAll(rctx, testenv.Client(t, srv), turn, 2); err != nil {
		t.Fatalf("the turn: %v", err)
	}
	checkOut(t, ctx, js, turn, 2)
}
