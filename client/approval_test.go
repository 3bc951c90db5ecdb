package client_test

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/permission"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
)

// TestApprovalsAndDecide: a call a permission rule asks about reaches the
// turn's approval feed, saying which call and which rule; Decide's answer
// reaches the waiting call: allowed, it runs; refused, the model is told
// why.
func TestApprovalsAndDecide(t *testing.T) {
	rules, err := permission.ParseRules(nil, nil, []string{"Noop"})
	if err != nil {
		t.Fatal(err)
	}
	// The approval timeout is past the test's bound: only Decide answers.
	_, cl := env(t, pipeline.Config{Executor: executor.Config{Policy: &permission.Policy{Default: rules}, ApprovalTimeout: 2 * testTimeout}})
	ctx := testCtx(t)
	requests := make(chan *schemas.ApprovalRequest, 4)
	stop, err := cl.Approvals("appr", func(r *schemas.ApprovalRequest) { requests <- r })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()

	calls := []client.Call{noop("a", `{"x":0}`), noop("b", `{"x":1}`)}
	if err := cl.SubmitCalls(ctx, "appr", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	asked := map[int]bool{}
	for len(asked) < len(calls) {
		var r *schemas.ApprovalRequest
		select {
		case r = <-requests:
		case <-ctx.Done():
			t.Fatalf("approval requests for %v only", asked)
		}
		if asked[r.Seq] {
			t.Fatalf("call %d asked twice", r.Seq)
		}
		asked[r.Seq] = true
		if r.Seq < 0 || r.Seq >= len(calls) || r.ToolUseID != calls[r.Seq].ID || r.Tool != "Noop" || !strings.Contains(r.Reason, "Noop") {
			t.Fatalf("request %+v", *r)
		}
		if err := cl.Decide(ctx, "appr", r.Seq, r.Seq == 0, "not now"); err != nil {
			t.Fatal(err)
		}
	}
	results, _ := readTurn(t, ctx, cl, "appr")
	if r := results[0]; r.IsError || r.Content != `{"x":0}` {
		t.Errorf("allowed call: %+v", *r)
	}
	if r := results[1]; !r.IsError || !strings.Contains(r.Content, "refused by the user: not now") {
		t.Errorf("refused call: %+v", *r)
	}
	select {
	case r := <-requests:
		t.Errorf("a request after every call was answered: %+v", *r)
	default:
	}
}
