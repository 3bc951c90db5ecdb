package metrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/metrics"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool/permission"
	"github.com/toolwire/toolwire/tool/testtools"
)

// value adds up the series of name whose labels include want: a
// counter's or gauge's value, a histogram's sample count.
func value(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue series
				}
			}
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			case m.Histogram != nil:
				sum += float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return sum
}

// runTurn submits calls as turn and reads its results to the end.
func runTurn(t *testing.T, ctx context.Context, cl *client.Client, turn string, opts client.TurnOptions, calls ...client.Call) {
	t.Helper()
	if err := cl.SubmitCalls(ctx, turn, calls, opts); err != nil {
		t.Fatal(err)
	}
	if _, _, err := testenv.ReadTurn(ctx, cl, turn); err != nil {
		t.Fatalf("turn %s: %v", turn, err)
	}
}

func sleepCall(id string, ms int, safe bool) client.Call {
	return client.Call{ID: id, Name: "Sleep", Input: json.RawMessage(fmt.Sprintf(`{"ms":%d,"safe":%t}`, ms, safe))}
}

// newPipeline starts a pipeline on an embedded server whose hooks feed a
// fresh registry, and a client.
func newPipeline(t *testing.T, cfg pipeline.Config) (*prometheus.Registry, *client.Client, func(pipeline.Config)) {
	t.Helper()
	srv := testenv.Server(t)
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	start := func(cfg pipeline.Config) {
		cfg.Tools, cfg.Hooks = testenv.Registry(t, testtools.Tools()...), m.Hooks()
		testenv.Pipeline(t, srv, cfg)
	}
	start(cfg)
	return reg, testenv.Client(t, srv), start
}

// TestParkedAndWaits: a turn limited to one call at a time parks its
// other calls, which the gauge shows while they wait and no more once
// they ran; every call counts as started, and those that waited have
// their waits measured.
func TestParkedAndWaits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a pipeline")
	}
	reg, cl, _ := newPipeline(t, pipeline.Config{Executors: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	parked := map[string]string{"tenant": "default"}
	done := make(chan struct{})
	var most float64
	go func() {
		defer close(done)
		runTurn(t, ctx, cl, "parks", client.TurnOptions{MaxConcurrency: 1},
			sleepCall("a", 300, true), sleepCall("b", 300, true), sleepCall("c", 300, true), sleepCall("d", 300, true))
	}()
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-time.After(20 * time.Millisecond):
		}
		most = max(most, value(t, reg, "toolwire_parked_calls", parked))
	}
	if most < 2 {
		t.Errorf("at most %v calls parked, want at least 2 of the 3 behind the first", most)
	}
	// The hooks are told after the results are published.
	testenv.WaitFor(t, 10*time.Second, "no call parked after the turn", func() bool {
		return value(t, reg, "toolwire_parked_calls", parked) == 0
	})
	if n := value(t, reg, "toolwire_calls_started_total", map[string]string{"tenant": "default", "tool": "Sleep"}); n != 4 {
		t.Errorf("%v calls started, want 4", n)
	}
	if n := value(t, reg, "toolwire_lease_wait_seconds", map[string]string{"tool": "Sleep"}); n < 2 || n > 3 {
		t.Errorf("%v waits measured, want those of the parked calls (2 or 3)", n)
	}
	waited := sumOf(t, reg, "toolwire_lease_wait_seconds")
	if waited < 0.5 {
		t.Errorf("the calls waited %.3fs in all, want at least the 0.3s+0.6s the last two queued behind the others", waited)
	}
}

// sumOf is a histogram's sum of samples over its series.
func sumOf(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return sum
}

// TestCancelledAndRejected: the executor counts a call its turn halted
// as cancelled and one the permission policy refused as rejected, not as
// errors.
func TestCancelledAndRejected(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a pipeline")
	}
	deny, err := permission.ParseRules(nil, []string{"Noop"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, cl, _ := newPipeline(t, pipeline.Config{Executor: executor.Config{Policy: &permission.Policy{Default: deny}}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	runTurn(t, ctx, cl, "denied", client.TurnOptions{}, client.Call{ID: "n", Name: "Noop", Input: json.RawMessage(`{}`)})
	outcome := func(tool, o string) float64 {
		return value(t, reg, "toolwire_calls_total", map[string]string{"stage": "executor", "tool": tool, "outcome": o})
	}
	// The hooks are told after the results are published.
	testenv.WaitFor(t, 10*time.Second, "the Noop call counted", func() bool { return outcome("Noop", "rejected")+outcome("Noop", "error") > 0 })
	if n := outcome("Noop", "rejected"); n != 1 {
		t.Errorf("%v Noop calls rejected, want 1 (errors: %v)", n, outcome("Noop", "error"))
	}

	// The first call runs; the other waits behind it and is halted by the
	// cancellation.
	calls := []client.Call{sleepCall("long", 1500, false), sleepCall("behind", 0, false)}
	if err := cl.SubmitCalls(ctx, "cancelled", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "the second call parked", func() bool {
		return value(t, reg, "toolwire_parked_calls", nil) == 1
	})
	if err := cl.Cancel(ctx, "cancelled", "enough"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := testenv.ReadTurn(ctx, cl, "cancelled"); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 10*time.Second, "both Sleep calls counted", func() bool {
		return outcome("Sleep", "cancelled")+outcome("Sleep", "ok")+outcome("Sleep", "error") == 2
	})
	if n := outcome("Sleep", "cancelled"); n < 1 {
		t.Errorf("%v Sleep calls cancelled, want at least the one halted (ok %v, error %v)", n, outcome("Sleep", "ok"), outcome("Sleep", "error"))
	}
	testenv.WaitFor(t, 10*time.Second, "no call parked after the turn", func() bool {
		return value(t, reg, "toolwire_parked_calls", nil) == 0
	})
}

// TestLeaseConflicts: two processes' executors share the calls of turns
// of unsafe calls; their writes of each turn's lease race, and the
// refused ones are counted as the executor's. Conflicts are a race, so
// turns are run until one is seen.
func TestLeaseConflicts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two pipelines")
	}
	reg, cl, start := newPipeline(t, pipeline.Config{Executors: 2})
	// A second process: executors only, with a lease store of its own.
	start(pipeline.Config{Routers: -1, Reorders: -1, Executors: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for turn := 0; value(t, reg, "toolwire_lease_conflicts_total", map[string]string{"stage": "executor"}) == 0; turn++ {
		if ctx.Err() != nil || turn == 40 {
			t.Fatalf("no executor lease conflict in %d turns (all stages: %v)", turn, value(t, reg, "toolwire_lease_conflicts_total", nil))
		}
		var calls []client.Call
		for i := range 8 {
			calls = append(calls, sleepCall(fmt.Sprint(i), 0, false))
		}
		runTurn(t, ctx, cl, fmt.Sprintf("race%d", turn), client.TurnOptions{}, calls...)
	}
}
