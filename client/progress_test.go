package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool"
)

// steps is a test tool that reports two progress lines while it runs.
func steps() *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Name:        "Steps",
		Description: "Test tool: reports two steps of progress, then ends.",
		Call: func(_ context.Context, _ json.RawMessage, _ tool.TurnContext, progress tool.Progress) (tool.Result, error) {
			progress("step 1 of 2")
			progress("step 2 of 2")
			return tool.Result{Content: "done"}, nil
		},
	})
}

// TestProgress: a turn's progress feed carries the lines a running tool
// reports, in the order it reports them, and a line as such a call
// finishes (not for a quick call that reported nothing);
// a feed of another turn hears none of it.
func TestProgress(t *testing.T) {
	_, cl := env(t, pipeline.Config{}, steps())
	ctx := testCtx(t)
	var mu sync.Mutex
	var lines []string
	stop, err := cl.Progress("prog", func(p *schemas.ToolProgress) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf("%d %s", p.Seq, p.Text))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	var other []*schemas.ToolProgress
	stopOther, err := cl.Progress("prog_other", func(p *schemas.ToolProgress) {
		mu.Lock()
		defer mu.Unlock()
		other = append(other, p)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stopOther()

	calls := []client.Call{{ID: "a", Name: "Steps"}, {ID: "b", Name: "Sleep", Input: []byte(`{"ms":1}`)}}
	if err := cl.SubmitCalls(ctx, "prog", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	readTurn(t, ctx, cl, "prog")
	// Progress is best effort and not stored: wait for it rather than
	// assume it came before the results.
	seen := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(lines)
	}
	finished := func(seq int, name string) bool {
		return slices.ContainsFunc(seen(), func(l string) bool {
			return strings.HasPrefix(l, fmt.Sprintf("%d %s", seq, name)) && strings.Contains(l, "finished in")
		})
	}
	testenv.WaitFor(t, testTimeout, "the progress of Steps", func() bool { return finished(0, "Steps") })
	got := seen()
	i1, i2 := slices.Index(got, "0 step 1 of 2"), slices.Index(got, "0 step 2 of 2")
	if i1 < 0 || i2 < i1 {
		t.Errorf("progress %q: want Steps' two lines in order", got)
	}
	if finished(1, "Sleep") {
		t.Errorf("progress %q: a 1 ms call that reported nothing got a finished line", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(other) != 0 {
		t.Errorf("another turn's feed heard %d lines", len(other))
	}
}

// TestFeedsRefuseNoCallback: a feed with nothing to call is refused when
// it is asked for, not as a panic when its first event comes.
func TestFeedsRefuseNoCallback(t *testing.T) {
	_, cl := env(t, pipeline.Config{Routers: -1, Executors: -1, Reorders: -1})
	if _, err := cl.Progress("t", nil); err == nil || !strings.Contains(err.Error(), "progress of turn t") {
		t.Errorf("Progress with no callback: %v", err)
	}
	if _, err := cl.Approvals("t", nil); err == nil || !strings.Contains(err.Error(), "approvals of turn t") {
		t.Errorf("Approvals with no callback: %v", err)
	}
}
