package stage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/stage"
)

// With lanes, a turn's messages are handled one at a time, in order.
func TestLanesKeepTurnOrder(t *testing.T) {
	t.Parallel()
	const n = 12
	e := newEnvWait(t, 5, bound)
	// Published before the stage starts, so that one pull brings them all.
	for seq := range n {
		e.use("t1", seq)
	}
	var (
		mu      sync.Mutex
		order   []int
		inside  atomic.Int32
		overlap atomic.Bool
	)
	spec := e.spec()
	spec.Lanes = 4
	e.run(spec, func(_ context.Context, m *stage.Msg) error {
		if inside.Add(1) > 1 {
			overlap.Store(true)
		}
		defer inside.Add(-1)
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		order = append(order, m.Meta.Seq)
		mu.Unlock()
		return nil
	})
	e.settled(n)
	if overlap.Load() {
		t.Error("two messages of one turn were in the handler at once")
	}
	mu.Lock()
	defer mu.Unlock()
	for i, seq := range order {
		if seq != i {
			t.Fatalf("handled in the order %v", order)
		}
	}
	if len(order) != n {
		t.Errorf("handled %d messages, want %d", len(order), n)
	}
}

// With lanes, a turn whose handler blocks does not hold up other turns.
// Lanes are chosen by a hash with a random seed, so one other turn could
// share the blocked turn's lane; with many others, some land elsewhere (all
// on one lane of 8: a chance of 8⁻²⁴).
func TestLanesRunTurnsInParallel(t *testing.T) {
	t.Parallel()
	const others = 24
	e := newEnvWait(t, 5, bound)
	otherDone := make(chan struct{})
	var once sync.Once
	var handledOthers atomic.Int32
	spec := e.spec()
	spec.Lanes = 8
	blocked := make(chan error, 1)
	e.run(spec, func(_ context.Context, m *stage.Msg) error {
		if m.Subject.Turn != "first" {
			handledOthers.Add(1)
			once.Do(func() { close(otherDone) })
			return nil
		}
		// The first turn waits for another turn's message to be handled,
		// which only a lane of its own can do meanwhile.
		select {
		case <-otherDone:
			blocked <- nil
		case <-time.After(bound):
			blocked <- errors.New("no other turn was handled while the first one blocked its lane")
		}
		return nil
	})
	e.use("first", 0)
	for i := range others {
		e.use(fmt.Sprintf("other%d", i), 0)
	}
	select {
	case err := <-blocked:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * bound):
		t.Fatal("the first turn's handler never ran")
	}
	e.settled(others + 1)
	if n := handledOthers.Load(); n != others {
		t.Errorf("handled %d other turns, want %d", n, others)
	}
}

// Without lanes, each message runs on its own goroutine: two messages of
// one turn can be in the handler at once (each waits for the other).
func TestNoLanesRunEachMessageApart(t *testing.T) {
	t.Parallel()
	e := newEnvWait(t, 5, bound)
	var arrived sync.WaitGroup
	arrived.Add(2)
	both := make(chan struct{})
	go func() { arrived.Wait(); close(both) }()
	var met atomic.Int32
	spec := e.spec()
	e.run(spec, func(_ context.Context, m *stage.Msg) error {
		if m.Delivered == 1 {
			arrived.Done()
		}
		select {
		case <-both:
			met.Add(1)
			return nil
		case <-time.After(bound):
			return stage.Drop(errors.New("the other message of the turn never came into the handler"))
		}
	})
	e.use("t1", 0)
	e.use("t1", 1)
	e.settled(2)
	if n := met.Load(); n != 2 {
		t.Errorf("%d messages met the other in the handler, want 2", n)
	}
	if dl := e.deadLetters(tenant); len(dl) != 0 {
		t.Errorf("%d dead letters: %s", len(dl), dl[0].Header.Get("Tw-Dlq-Reason"))
	}
}
