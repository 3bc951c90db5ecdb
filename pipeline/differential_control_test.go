package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/refsched"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool"
)

// stepInput is a call of the control test's tools.
type stepInput struct {
	MS   int    `json:"ms"`
	Safe bool   `json:"safe"`
	Fail bool   `json:"fail"`
	Set  string `json:"set,omitempty"`
}

const stepSchema = `{"type":"object","properties":{"ms":{"type":"integer"},"safe":{"type":"boolean"},"fail":{"type":"boolean"},"set":{"type":"string"}},"required":["ms"],"additionalProperties":false}`

// stepTool sleeps, fails when told, and changes the turn's working
// directory (used as a plain label) when told; it reports the context it
// ran with. StepX cancels its siblings on error and stops on interrupt;
// Step does neither.
func stepTool(name string, cancels bool) *tool.Tool {
	def := tool.Definition{
		Name: name, InputSchema: json.RawMessage(stepSchema), CancelsSiblings: cancels,
		ConcurrencySafe: func(in json.RawMessage) (bool, error) {
			var s stepInput
			err := json.Unmarshal(in, &s)
			return s.Safe, err
		},
		Call: func(ctx context.Context, in json.RawMessage, tc tool.TurnContext, _ tool.Progress) (tool.Result, error) {
			var s stepInput
			if err := json.Unmarshal(in, &s); err != nil {
				return tool.Result{}, err
			}
			t := time.NewTimer(time.Duration(s.MS) * time.Millisecond)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return tool.Result{}, ctx.Err()
			}
			if s.Fail {
				return tool.Result{Content: "step failed", IsError: true}, nil
			}
			r := tool.Result{Content: fmt.Sprintf("ran with %q v%d", tc.WorkDir, tc.Version)}
			if s.Set != "" {
				set := s.Set
				r.Context = &tool.ContextChange{WorkDir: &set}
			}
			return r, nil
		},
	}
	if cancels {
		def.Interrupt = tool.InterruptCancel
	}
	return tool.MustBuild(def)
}

type controlCall struct {
	tool string
	in   stepInput
	// reject, when set, makes the router answer the call without running
	// it: "unknown" (no such tool), "invalid" (input the schema refuses) or
	// "incomplete" (a block the stream never finished).
	reject string
}

// rejectText is what the router's answer to a rejected call must contain.
var rejectText = map[string]string{
	"unknown":    "No such tool available: Nope",
	"invalid":    "ms",
	"incomplete": "Tool call incomplete, not executed",
}

// safe is the call's concurrency class as the rule sees it: a rejected
// call is unsafe (fail closed).
func (c controlCall) safe() bool { return c.in.Safe && c.reject == "" }

// aborts reports whether the call's failure cancels its siblings: a StepX
// that fails when run, or whose input the router refuses.
func (c controlCall) aborts() bool {
	return c.tool == "StepX" && (c.reject == "invalid" || c.reject == "" && c.in.Fail)
}

type controlTurn struct {
	id       string
	calls    []controlCall
	max      int
	cancelAt time.Duration // < 0: no user interrupt
}

func newControlTurn(r *rand.Rand, i int) controlTurn {
	t := controlTurn{id: fmt.Sprintf("ctl_%d_%d", i, r.IntN(1_000_000)), max: 1 + r.IntN(6), cancelAt: -1}
	if r.IntN(7) == 0 {
		t.cancelAt = time.Duration(r.IntN(25)) * time.Millisecond
	}
	for j := range 1 + r.IntN(20) {
		c := controlCall{tool: "Step", in: stepInput{MS: r.IntN(12), Safe: r.IntN(3) > 0, Fail: r.IntN(12) == 0}}
		if r.IntN(4) == 0 {
			c.tool = "StepX"
		}
		if r.IntN(4) == 0 {
			c.in.Set = fmt.Sprintf("L%d", j)
		}
		if r.IntN(10) == 0 {
			c.reject = []string{"unknown", "invalid", "incomplete"}[r.IntN(3)]
			c.in.Set = ""
			if c.reject == "unknown" {
				c.tool = "Nope"
			}
		}
		t.calls = append(t.calls, c)
	}
	return t
}

// TestDifferentialControl extends the differential test with random
// sibling errors, user interrupts and context changes, held to the
// reference (refsched) extended the same way.
func TestDifferentialControl(t *testing.T) {
	turns := 500
	if testing.Short() {
		turns = 60
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 11))
	srv := testenv.Server(t)
	testenv.Pipeline(t, srv, pipeline.Config{
		Tools:     testenv.Registry(t, stepTool("Step", false), stepTool("StepX", true)),
		Executors: 3, Reorders: 2, Routers: 2,
	})
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var (
		wg    sync.WaitGroup
		sem   = make(chan struct{}, 24)
		mu    sync.Mutex
		stats = map[string]int{}
	)
	for i := range turns {
		turn := newControlTurn(r, i)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results, err := runControlTurn(ctx, cl, turn)
			if err != nil {
				t.Errorf("turn %s (max %d, cancel %v, calls %+v): %v; %d results", turn.id, turn.max, turn.cancelAt, turn.calls, err, len(results))
				dumpLease(t, srv, turn.id)
				return
			}
			kinds, err := checkControlTurn(turn, results)
			if err != nil {
				t.Errorf("turn %s (max %d, cancel %v, calls %+v): %v", turn.id, turn.max, turn.cancelAt, turn.calls, err)
			}
			mu.Lock()
			for k, n := range kinds {
				stats[k] += n
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Logf("%d turns; outcomes %v", turns, stats)
	for _, k := range []string{"normal", "failed", "sibling", "interrupt", "rejected"} {
		if stats[k] == 0 {
			t.Errorf("no %s outcome in %d turns: the test did not exercise it", k, turns)
		}
	}
}

func runControlTurn(ctx context.Context, cl *client.Client, turn controlTurn) ([]*schemas.ToolResult, error) {
	calls := make([]client.Call, len(turn.calls))
	for i, c := range turn.calls {
		in, _ := json.Marshal(c.in)
		calls[i] = client.Call{ID: fmt.Sprintf("toolu_%s_%d", turn.id, i), Name: c.tool, Input: in}
		switch c.reject {
		case "invalid":
			calls[i].Input = json.RawMessage(`{"safe":true}`)
		case "incomplete":
			calls[i].Input, calls[i].Incomplete = json.RawMessage(`{"ms": 1, "sa`), "the stream ended inside this call"
		}
	}
	if err := cl.SubmitCalls(ctx, turn.id, calls, client.TurnOptions{MaxConcurrency: turn.max}); err != nil {
		return nil, err
	}
	if turn.cancelAt >= 0 {
		time.Sleep(turn.cancelAt)
		if err := cl.Cancel(ctx, turn.id, "test interrupt"); err != nil {
			return nil, err
		}
	}
	var results []*schemas.ToolResult
	for d, err := range cl.Results(ctx, turn.id) {
		if err != nil {
			return results, err
		}
		if d.Done != nil {
			if d.Done.Results != len(turn.calls) {
				return results, fmt.Errorf("turn_done says %d results, want %d", d.Done.Results, len(turn.calls))
			}
			return results, nil
		}
		results = append(results, d.Result)
	}
	return results, fmt.Errorf("results ended without turn_done")
}

// checkControlTurn classifies each result and holds the turn to the
// extended reference; it returns the count of each outcome.
func checkControlTurn(turn controlTurn, results []*schemas.ToolResult) (map[string]int, error) {
	n := len(turn.calls)
	if len(results) != n {
		return nil, fmt.Errorf("%d results for %d calls", len(results), n)
	}
	safe := make([]bool, n)
	for i, c := range turn.calls {
		safe[i] = c.safe()
	}
	sibling := "<tool_use_error>" + texts.Sibling("StepX") + "</tool_use_error>"
	interrupt := "<tool_use_error>" + texts.Interrupt + "</tool_use_error>"
	kinds := map[string]int{}
	kind := make([]string, n)
	changed := make([]bool, n)
	var ran []int
	for i, res := range results {
		c := turn.calls[i]
		if res.Seq != i {
			return nil, fmt.Errorf("delivery %d has seq %d", i, res.Seq)
		}
		switch {
		case c.reject != "":
			// The router's answer, whatever else happened in the turn.
			if !res.IsError || res.Worker != "router" || res.Attempt != 0 || !strings.Contains(res.Content, rejectText[c.reject]) {
				return nil, fmt.Errorf("call %d (%s, rejected %s): unexpected result %+v", i, c.tool, c.reject, res)
			}
			kind[i] = "rejected"
		case res.Content == sibling:
			kind[i] = "sibling"
		case res.Content == interrupt:
			kind[i] = "interrupt"
			if turn.cancelAt < 0 {
				return nil, fmt.Errorf("call %d got the interrupt text in a turn nobody interrupted", i)
			}
			if res.Attempt > 0 && c.tool != "StepX" {
				return nil, fmt.Errorf("call %d (%s, interrupt: block) was stopped while running", i, c.tool)
			}
		case c.in.Fail && res.IsError && strings.Contains(res.Content, "step failed"):
			kind[i] = "failed"
		case !c.in.Fail && !res.IsError && strings.HasPrefix(res.Content, "ran with"):
			kind[i] = "normal"
			changed[i] = c.in.Set != ""
		default:
			return nil, fmt.Errorf("call %d: unexpected result %+v", i, res)
		}
		kinds[kind[i]]++
		if res.Attempt > 0 {
			ran = append(ran, i)
		}
	}
	// The start rule over the calls that ran (stopped ones ran until
	// stopped) and the rejected ones: an unsafe call of no length at its
	// place, when every earlier call had finished.
	var rs []bool
	var spans []refsched.Span
	var placeAt time.Time
	for i, res := range results {
		switch {
		case kind[i] == "rejected":
			rs = append(rs, false)
			spans = append(spans, refsched.Span{Start: placeAt, End: placeAt})
		case res.Attempt > 0:
			rs = append(rs, safe[i])
			spans = append(spans, refsched.Span{Start: res.StartedAt, End: res.FinishedAt})
		}
		if res.FinishedAt.After(placeAt) {
			placeAt = res.FinishedAt
		}
	}
	if err := refsched.Check(rs, spans, turn.max); err != nil {
		// Check compares calls in the order given, which is seq order.
		return kinds, err
	}
	// Sibling cancellation: every sibling text is explained by a failing
	// StepX whose reach holds the call — never a call before the failing
	// call's batch — and whatever had to wait for a failing StepX never ran.
	var failing []int
	for i, c := range turn.calls {
		if c.aborts() && (kind[i] == "failed" || kind[i] == "rejected") {
			failing = append(failing, i)
		}
	}
	for j := range results {
		if kind[j] != "sibling" {
			continue
		}
		explained := false
		for _, f := range failing {
			explained = explained || refsched.Reach(safe, f)[j]
		}
		if !explained {
			return kinds, fmt.Errorf("call %d got the sibling text, but no failing StepX (%v) reaches it: a failure cancelled a call before its batch", j, failing)
		}
	}
	for _, f := range failing {
		for j, must := range refsched.MustWaitFor(safe, f) {
			if must && kind[j] != "rejected" && (kind[j] == "normal" || kind[j] == "failed" || results[j].Attempt > 0) {
				return kinds, fmt.Errorf("call %d had to wait for failing call %d but ran (%s)", j, f, kind[j])
			}
		}
	}
	// Context modifiers: every call that ran normally saw exactly the
	// reference's context.
	versions, last := refsched.ContextSeen(safe, changed)
	for i, res := range results {
		if kind[i] != "normal" {
			continue
		}
		label := ""
		if last[i] >= 0 {
			label = turn.calls[last[i]].in.Set
		}
		want := fmt.Sprintf("ran with %q v%d", label, versions[i])
		if res.Content != want || res.ContextVersion != int64(versions[i]) {
			return kinds, fmt.Errorf("call %d: %q (version %d), want %q", i, res.Content, res.ContextVersion, want)
		}
	}
	return kinds, nil
}
