package top_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/top"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/permission"
	"github.com/toolwire/toolwire/tool/testtools"
)

// TestSnapshot: on a real pipeline, a finished turn, a turn with a call
// running and one waiting for a person's approval, and a dead letter are
// each reported where an operator looks for them.
func TestSnapshot(t *testing.T) {
	rules, err := permission.ParseRules(nil, nil, []string{"Noop"})
	if err != nil {
		t.Fatal(err)
	}
	srv := testenv.Server(t)
	testenv.Pipeline(t, srv, pipeline.Config{
		Tools: testenv.Registry(t, testtools.Tools()...), Executors: 2,
		Executor: executor.Config{Policy: &permission.Policy{Default: rules}, ApprovalTimeout: time.Hour},
	})
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sleep := func(ms int) client.Call {
		return client.Call{ID: "s", Name: "Sleep", Input: []byte(fmt.Sprintf(`{"ms":%d,"safe":true}`, ms))}
	}
	if err := cl.SubmitCalls(ctx, "finished", []client.Call{sleep(1)}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := testenv.ReadTurn(ctx, cl, "finished"); err != nil {
		t.Fatal(err)
	}
	if err := cl.SubmitCalls(ctx, "busy", []client.Call{sleep(8_000), sleep(8_000)}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cl.SubmitCalls(ctx, "asking", []client.Call{{ID: "n", Name: "Noop", Input: []byte(`{}`)}}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	nc := testenv.Conn(t, srv, "garbage")
	if err := nc.Publish(subjects.Default().In(subjects.DefaultTenant, "junk", subjects.KindUse), []byte("not an event")); err != nil {
		t.Fatal(err)
	}

	w, err := top.Watch(ctx, testenv.JS(t, srv, "top"), subjects.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var s *top.Snapshot
	// A call waiting for its approval is claimed by its worker: it counts
	// as running, and as an approval waiting.
	testenv.WaitFor(t, time.Minute, "the snapshot to show the busy turn running, the approval and the dead letter", func() bool {
		s, err = w.Snapshot(ctx, top.Options{})
		return err == nil && s.Calls.Running == 3 && s.ApprovalsWaiting == 1 && s.DeadLetters >= 1
	})
	turns := map[string]top.Turn{}
	for _, tr := range s.Turns {
		turns[tr.Turn] = tr
	}
	if f := turns["finished"]; !f.Finished || f.Done != 1 || f.Total != 1 {
		t.Errorf("finished turn: %+v", f)
	}
	if b := turns["busy"]; b.Finished || b.Running != 2 || b.Total != 2 {
		t.Errorf("busy turn: %+v", b)
	}
	if a := turns["asking"]; a.Finished || a.Tenant != subjects.DefaultTenant {
		t.Errorf("asking turn: %+v", a)
	}
	if s.TurnsInFlight != 2 || s.TurnsFinished != 1 {
		t.Errorf("in flight %d, finished %d", s.TurnsInFlight, s.TurnsFinished)
	}
	running := 0
	for _, r := range s.Running {
		if r.Tool == "Sleep" && r.Worker != "" {
			running += r.Calls
		}
	}
	if running != 2 {
		t.Errorf("running by worker: %+v", s.Running)
	}
	stages := map[string]bool{}
	for _, c := range s.Consumers {
		stages[c.Stage] = true
	}
	if len(stages) != 3 {
		t.Errorf("consumers: %+v", s.Consumers)
	}
	// The pipeline stops once its calls are answered.
	if err := cl.Decide(ctx, "asking", 0, false, "the test is over"); err != nil {
		t.Fatal(err)
	}
}
