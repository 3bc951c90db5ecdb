package tenantauth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool/permission"
)

// TestNoDecisionFromAnotherTenant: a tenant may read its own approval
// decision by direct get, and the server sends the answer wherever the
// request's reply subject says — the stream that captures that subject
// stores it, and its subscribers get it. Aimed at another tenant's waiting
// call, it must not decide that call: the copy names, in its Nats-Subject
// header, the subject it was stored on, which is not the call's.
func TestNoDecisionFromAnotherTenant(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a real server with the tenants' configuration, an approval that must time out")
	}
	rules, err := permission.ParseRules(nil, nil, []string{"Noop"})
	if err != nil {
		t.Fatal(err)
	}
	e := startTenants(t, executor.Config{Policy: &permission.Policy{Default: rules}, ApprovalTimeout: 3 * time.Second})
	acme, globex := newClient(t, e.acme, "acme"), newClient(t, e.globex, "globex")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// acme approves its own call.
	stop, err := acme.Approvals("a1", func(r *schemas.ApprovalRequest) {
		go func() { _ = acme.Decide(ctx, "a1", r.Seq, true, "") }()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := acme.SubmitCalls(ctx, "a1", noops(1), client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	if r := readTurn(t, ctx, acme, "a1", 1); r[0].IsError {
		t.Fatalf("acme's approved call: %q", r[0].Content)
	}

	// globex's call waits for its human, who never answers; acme aims its
	// own decision at it, again and again while it waits.
	asked := make(chan struct{}, 1)
	stopG, err := globex.Approvals("g1", func(*schemas.ApprovalRequest) {
		select {
		case asked <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stopG()
	if err := globex.SubmitCalls(ctx, "g1", noops(1), client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	<-asked
	for range 5 {
		if err := e.acme.PublishRequest("$JS.API.DIRECT.GET.TW_APPROVAL.tw.acme.approval.a1.0.decision", "tw.globex.approval.g1.0.decision", nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r := readTurn(t, ctx, globex, "g1", 1)
	if !r[0].IsError || !strings.Contains(r[0].Content, "approval") {
		t.Errorf("globex's call, which its own human never answered: %q", r[0].Content)
	}
}
