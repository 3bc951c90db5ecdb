package pipeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool/builtin"
	"github.com/toolwire/toolwire/tool/permission"
)

// TestApprovals: a call an ask rule covers waits for its human; the client
// answers through approval events; no answer in time is a refusal; a deny
// rule refuses at once, naming the rule.
func TestApprovals(t *testing.T) {
	rules, err := permission.ParseRules(nil, []string{"Bash(rm:*)"}, []string{"Bash(echo ask:*)"})
	if err != nil {
		t.Fatal(err)
	}
	srv := testenv.Server(t)
	testenv.Pipeline(t, srv, pipeline.Config{
		Tools: testenv.Registry(t, builtin.Tools()...), WorkDir: t.TempDir(),
		Executor: executor.Config{Policy: &permission.Policy{Default: rules}, ApprovalTimeout: 1500 * time.Millisecond},
	})
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// A refusal is a failure and Bash cancels its siblings, so each answer
	// gets a turn of its own; "appr2" is never answered.
	answers := map[string]bool{"appr": true, "appr1": false}
	for turn, allow := range answers {
		stop, err := cl.Approvals(turn, func(r *schemas.ApprovalRequest) {
			go func() {
				if err := cl.Decide(ctx, turn, r.Seq, allow, "not today"); err != nil {
					t.Error(err)
				}
			}()
		})
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
	}
	res := runCalls(t, cl, "appr", []client.Call{call("a", "Bash", `{"command":"echo ask one"}`)})
	if res[0].IsError || strings.TrimSpace(res[0].Content) != "ask one" {
		t.Errorf("approved call: %+v", res[0])
	}
	res = runCalls(t, cl, "appr1", []client.Call{call("a", "Bash", `{"command":"echo ask two"}`)})
	if !res[0].IsError || !strings.Contains(res[0].Content, "refused by the user: not today") {
		t.Errorf("refused call: %+v", res[0])
	}

	res = runCalls(t, cl, "appr2", []client.Call{call("a", "Bash", `{"command":"echo ask three"}`)})
	if !res[0].IsError || !strings.Contains(res[0].Content, "nobody answered") {
		t.Errorf("unanswered call: %+v", res[0])
	}
	res = runCalls(t, cl, "appr3", []client.Call{call("a", "Bash", `{"command":"ls && rm -rf x"}`)})
	if !res[0].IsError || !strings.Contains(res[0].Content, "Bash(rm:*)") {
		t.Errorf("denied call: %+v", res[0])
	}
}
