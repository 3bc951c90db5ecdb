package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool/permission"
)

// TestApprovals: a call an ask rule holds reaches the approvals stream;
// the decision posted for it runs it or refuses it with the reason given;
// the stream ends with done once the turn is done.
func TestApprovals(t *testing.T) {
	rules, err := permission.ParseRules(nil, nil, []string{"Noop"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, options{policy: &permission.Policy{Default: rules}})
	ctx := testCtx(t)
	const turn = "turn_ask"
	asks := e.readSSE(e.req(ctx, "GET", "/v1/turns/"+turn+"/approvals", "", nil))
	e.status(e.req(ctx, "POST", "/v1/turns/"+turn+"/calls", "", callsBody(0, true, `{"q":0}`, `{"q":1}`)), http.StatusAccepted)
	seen := map[int]bool{}
	for len(seen) < 2 {
		ev, ok := asks.next(ctx)
		if !ok || ev.Name != "approval" {
			t.Fatalf("approvals: %v %v", ev, ok)
		}
		var req struct {
			Seq       int    `json:"seq"`
			Tool      string `json:"tool"`
			ToolUseID string `json:"tool_use_id"`
		}
		if err := json.Unmarshal(ev.Data, &req); err != nil || req.Tool != "Noop" || ev.ID != fmt.Sprint(req.Seq) || seen[req.Seq] {
			t.Fatalf("approval event %s %s", ev.ID, ev.Data)
		}
		seen[req.Seq] = true
		allow := req.Seq == 0
		e.status(e.req(ctx, "POST", fmt.Sprintf("/v1/turns/%s/approvals/%d", turn, req.Seq), "", fmt.Sprintf(`{"allow":%v,"reason":"not this one"}`, allow)), http.StatusNoContent)
	}
	if ev, ok := asks.next(ctx); !ok || ev.Name != "done" {
		t.Fatalf("approvals stream after the turn: %v %v", ev, ok)
	}
	evs := e.readSSE(e.req(ctx, "GET", "/v1/turns/"+turn+"/results", "", nil)).all(ctx)
	if r := result(t, evs[0]); r.IsError || r.Content != `{"q":0}` {
		t.Errorf("allowed call: %+v", r)
	}
	if r := result(t, evs[1]); !r.IsError || !strings.Contains(r.Content, "not this one") {
		t.Errorf("refused call: %+v", r)
	}
}
