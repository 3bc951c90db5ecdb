package stage_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/internal/stage"
)

// A handler that fails because JetStream cannot answer (a stream electing
// a leader) is held in the process and tried again until it goes through,
// on the same delivery: the wait burns none of the message's deliveries,
// however many tries it takes — more than the in-process retries and the
// deliveries of any other error.
func TestUnavailableHeldOnOneDelivery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 3)
	var got recorder
	var tries atomic.Int32
	e.run(e.spec(), got.handler(func(*stage.Msg) error {
		if tries.Add(1) <= 8 {
			return fmt.Errorf("lease: write: %w", nats.ErrNoResponders)
		}
		return nil
	}))
	e.use("t1", 0)
	s := got.wait(t, "the handling that goes through", 9)
	if last := s[8]; last.delivered != 1 || last.attempt != 9 {
		t.Errorf("the ninth try saw Delivered %d, Attempt %d; want 1, 9", last.delivered, last.attempt)
	}
	e.settled(1)
	if dl := e.deadLetters(tenant); len(dl) != 0 {
		t.Errorf("%d dead letters, want none", len(dl))
	}
}
