package tenantauth_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
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

// TestRepliesStayInTheTenantsAccount: the server sends the answer to a
// tenant's request — a JetStream publish's ack, a direct get's answer —
// where the request's reply subject says. In the tenant's own account no
// stream or bucket captures anything: aimed at another tenant's lease key
// or out subject, the answers reach nothing of the stages' account.
func TestRepliesStayInTheTenantsAccount(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a real server with the tenants' configuration")
	}
	e := startTenants(t)
	sp := subjects.Default()
	acme := newClient(t, e.acme, "acme")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := acme.SubmitCalls(ctx, "a1", noops(1), client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	readTurn(t, ctx, acme, "a1", 1)

	spy, err := e.stages.SubscribeSync(">")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.stages.Flush(); err != nil {
		t.Fatal(err)
	}
	targets := []string{sp.LeaseSubject("globex", "g9"), sp.Out("globex", "g9"), sp.ApprovalDecision("globex", "g9", 0), "$KV.TW_TOOLS.default.Noop.w"}
	for _, target := range targets {
		// A publish to its own in subject, its ack aimed at target.
		if err := e.acme.PublishRequest(sp.In("acme", "probe", subjects.KindUse), target, []byte("not an event")); err != nil {
			t.Fatal(err)
		}
		// A direct get of its own out subject, its answer aimed at target.
		if err := e.acme.PublishRequest(sp.DirectGetLast(sp.OutStream(), sp.Out("acme", "a1")), target, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.acme.Flush(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		m, err := spy.NextMsg(time.Until(deadline))
		if err != nil {
			break
		}
		for _, target := range targets {
			if m.Subject == target {
				t.Errorf("acme's reply reached %s in the stages' account: %q", target, m.Data)
			}
		}
	}
	js, err := jetstream.New(e.stages)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ stream, subject string }{
		{"KV_" + sp.LeaseBucket(), sp.LeaseSubject("globex", "g9")},
		{sp.OutStream(), sp.Out("globex", "g9")},
		{sp.ApprovalStream(), sp.ApprovalDecision("globex", "g9", 0)},
	} {
		s, err := js.Stream(ctx, c.stream)
		if err != nil {
			t.Fatal(err)
		}
		if m, err := s.GetLastMsgForSubject(ctx, c.subject); err == nil {
			t.Errorf("%s holds a message of acme's on %s: %q", c.stream, c.subject, m.Data)
		}
	}
}
