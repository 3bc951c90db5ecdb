package client_test

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/permission"
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

// TestApprovalsCatchUp: a request made before the agent started its
// approval feed is delivered all the same (once), so the call does not
// wait out its timeout to be refused; a request already decided is not
// delivered again.
func TestApprovalsCatchUp(t *testing.T) {
	rules, err := permission.ParseRules(nil, nil, []string{"Noop"})
	if err != nil {
		t.Fatal(err)
	}
	srv, cl := env(t, pipeline.Config{Executor: executor.Config{Policy: &permission.Policy{Default: rules}, ApprovalTimeout: 2 * testTimeout}})
	ctx := testCtx(t)
	calls := []client.Call{noop("a", `{"x":0}`), noop("b", `{"x":1}`)}
	if err := cl.SubmitCalls(ctx, "late_feed", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	// Both calls are safe, so both ask at once; wait until both requests
	// are stored, then decide the first one before the feed starts.
	sp := subjects.Default()
	js := testenv.JS(t, srv, "approvals-check")
	testenv.WaitFor(t, testTimeout, "both approval requests stored", func() bool {
		return len(testenv.SubjectMsgs(t, ctx, js, sp.ApprovalStream(), sp.ApprovalRequests(subjects.DefaultTenant, "late_feed"))) == 2
	})
	if err := cl.Decide(ctx, "late_feed", 0, true, ""); err != nil {
		t.Fatal(err)
	}
	requests := make(chan *schemas.ApprovalRequest, 4)
	stop, err := cl.Approvals("late_feed", func(r *schemas.ApprovalRequest) { requests <- r })
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	select {
	case r := <-requests:
		if r.Seq != 1 {
			t.Fatalf("delivered the request of call %d, want only the undecided call 1", r.Seq)
		}
		if err := cl.Decide(ctx, "late_feed", 1, true, ""); err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("the request made before the feed started was never delivered")
	}
	results, _ := readTurn(t, ctx, cl, "late_feed")
	for _, r := range results {
		if r.IsError {
			t.Errorf("call %d: %+v", r.Seq, *r)
		}
	}
	select {
	case r := <-requests:
		t.Errorf("a request delivered twice or after its decision: %+v", *r)
	default:
	}
}
