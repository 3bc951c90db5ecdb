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
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool/testtools"
)

type sleepCall struct {
	MS   int  `json:"ms"`
	Safe bool `json:"safe"`
	Fail bool `json:"fail"`
}

type randomTurn struct {
	id    string
	calls []sleepCall
	max   int
}

func newRandomTurn(r *rand.Rand, i int) randomTurn {
	t := randomTurn{id: fmt.Sprintf("diff_%d_%d", i, r.IntN(1_000_000)), max: 1 + r.IntN(6)}
	for range 1 + r.IntN(20) {
		t.calls = append(t.calls, sleepCall{MS: r.IntN(12), Safe: r.IntN(3) > 0, Fail: r.IntN(12) == 0})
	}
	return t
}

// TestDifferential runs random turns through the real pipeline (embedded
// JetStream, 3 executors, 2 reorder instances) and holds every turn to the
// reference scheduler's rule and to exact, ordered, once-only delivery.
func TestDifferential(t *testing.T) {
	turns := 500
	if testing.Short() {
		turns = 60
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))

	srv := testenv.Server(t)
	p := testenv.Pipeline(t, srv, pipeline.Config{
		Tools:     testenv.Registry(t, testtools.Tools()...),
		Executors: 3, Reorders: 2, Routers: 2,
	})
	cl := testenv.Client(t, srv)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var (
		wg      sync.WaitGroup
		sem     = make(chan struct{}, 24)
		mu      sync.Mutex
		workers = map[string]int{}
		batched int
	)
	for i := range turns {
		turn := newRandomTurn(r, i)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			began := time.Now()
			results, err := runTurn(ctx, cl, turn)
			if el := time.Since(began); el > 5*time.Second {
				t.Logf("slow turn %s: %v", turn.id, el)
				for _, r := range results {
					t.Logf("  seq %d safe %v start +%v end +%v", r.Seq, r.Safe, r.StartedAt.Sub(began), r.FinishedAt.Sub(began))
				}
			}
			if err != nil {
				t.Errorf("turn %s: %v", turn.id, err)
				return
			}
			if err := checkTurn(turn, results); err != nil {
				t.Errorf("turn %s (max %d, calls %+v): %v", turn.id, turn.max, turn.calls, err)
				for _, r := range results {
					t.Logf("  seq %d worker %s start %s end %s", r.Seq, r.Worker, r.StartedAt.Format(time.RFC3339Nano), r.FinishedAt.Format(time.RFC3339Nano))
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, res := range results {
				workers[res.Worker]++
			}
			if len(refsched.Batches(safeFlags(turn))) < len(turn.calls) {
				batched++
			}
		}()
	}
	wg.Wait()
	if len(workers) < len(p.Workers) {
		t.Errorf("results came from %d workers %v, want all %d", len(workers), workers, len(p.Workers))
	}
	t.Logf("%d turns, %d with a concurrent batch, results per worker %v", turns, batched, workers)
}

func safeFlags(turn randomTurn) []bool {
	s := make([]bool, len(turn.calls))
	for i, c := range turn.calls {
		s[i] = c.Safe
	}
	return s
}

func runTurn(ctx context.Context, cl *client.Client, turn randomTurn) ([]*schemas.ToolResult, error) {
	calls := make([]client.Call, len(turn.calls))
	for i, c := range turn.calls {
		in, _ := json.Marshal(c)
		calls[i] = client.Call{ID: fmt.Sprintf("toolu_%s_%d", turn.id, i), Name: "Sleep", Input: in}
	}
	if err := cl.SubmitCalls(ctx, turn.id, calls, client.TurnOptions{MaxConcurrency: turn.max}); err != nil {
		return nil, err
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

// checkTurn holds one turn's delivery to the oracle.
func checkTurn(turn randomTurn, results []*schemas.ToolResult) error {
	if len(results) != len(turn.calls) {
		return fmt.Errorf("%d results for %d calls", len(results), len(turn.calls))
	}
	spans := make([]refsched.Span, len(results))
	for i, res := range results {
		c := turn.calls[i]
		if res.Seq != i {
			return fmt.Errorf("delivery %d has seq %d: out of order", i, res.Seq)
		}
		if want := fmt.Sprintf("toolu_%s_%d", turn.id, i); res.ToolUseID != want {
			return fmt.Errorf("result %d is for %s, want %s", i, res.ToolUseID, want)
		}
		if res.IsError != c.Fail {
			return fmt.Errorf("result %d is_error=%v, want %v: %s", i, res.IsError, c.Fail, res.Content)
		}
		if !c.Fail && res.Content != fmt.Sprintf("slept %d ms", c.MS) {
			return fmt.Errorf("result %d content %q", i, res.Content)
		}
		if c.Fail && !strings.Contains(res.Content, "<tool_use_error>") {
			return fmt.Errorf("result %d error not wrapped: %q", i, res.Content)
		}
		if res.Safe != c.Safe {
			return fmt.Errorf("result %d ran with safe=%v, want %v", i, res.Safe, c.Safe)
		}
		if res.Attempt != 1 {
			return fmt.Errorf("result %d attempt %d, want 1", i, res.Attempt)
		}
		spans[i] = refsched.Span{Start: res.StartedAt, End: res.FinishedAt}
	}
	return refsched.Check(safeFlags(turn), spans, turn.max)
}
