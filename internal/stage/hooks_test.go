package stage_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/testenv"
)

// Hooks.Handled is told every delivery's outcome, with the stage's name.
func TestHooksHandled(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 5)
	var (
		mu       sync.Mutex
		outcomes = map[stage.Outcome]int{}
		stages   = map[string]bool{}
		negative bool
	)
	spec := e.spec()
	spec.Hooks.Handled = func(h stage.Handling) {
		mu.Lock()
		defer mu.Unlock()
		outcomes[h.Outcome]++
		stages[h.Stage] = true
		negative = negative || h.Took < 0
	}
	// seq 0 is acked; 1 retried once, then acked; 2 dead-lettered; 3 left
	// once, then acked after the AckWait.
	e.run(spec, func(_ context.Context, m *stage.Msg) error {
		switch {
		case m.Meta.Seq == 1 && m.Attempt == 1:
			return errors.New("not yet")
		case m.Meta.Seq == 2:
			return stage.Fail(errors.New("never"))
		case m.Meta.Seq == 3 && m.Delivered == 1:
			return stage.Leave()
		}
		return nil
	})
	for seq := range 4 {
		e.use("t1", seq)
	}
	want := map[stage.Outcome]int{stage.Acked: 3, stage.Retried: 1, stage.DeadLettered: 1, stage.Left: 1}
	testenv.WaitFor(t, bound, "every outcome", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return outcomes[stage.Acked] >= want[stage.Acked] && outcomes[stage.DeadLettered] >= 1
	})
	e.settled(4)
	mu.Lock()
	defer mu.Unlock()
	for o, n := range want {
		if outcomes[o] != n {
			t.Errorf("%s told %d times, want %d (all: %v)", o, outcomes[o], n, outcomes)
		}
	}
	if len(stages) != 1 || !stages[stageName] {
		t.Errorf("stages told %v, want only %s", stages, stageName)
	}
	if negative {
		t.Error("a delivery took a negative time")
	}
}

func TestOutcomeString(t *testing.T) {
	for o, want := range map[stage.Outcome]string{
		stage.Acked: "acked", stage.Retried: "retried", stage.DeadLettered: "dead_lettered",
		stage.Left: "left", stage.Outcome(99): "unknown",
	} {
		if got := o.String(); got != want {
			t.Errorf("Outcome(%d).String() = %q, want %q", int(o), got, want)
		}
	}
}
