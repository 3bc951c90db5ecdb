package provision_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/subjects"
)

// TestNothingStoredIsDropped: an event the input or result stream
// acknowledged while it was being made is kept for its consumer. An
// interest stream drops what no consumer wants when it arrives, and the
// stream once took events before its consumer existed: a turn submitted to
// a server still starting was told stored, then lost, and never completed.
// Each round makes the streams of a new space while events are published
// to both, as fast as they are answered.
func TestNothingStoredIsDropped(t *testing.T) {
	srv := testenv.Server(t)
	js, err := jetstream.New(testenv.Conn(t, srv, "provision-test"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for round := range 5 {
		sp, err := subjects.New(fmt.Sprintf("p%d", round))
		if err != nil {
			t.Fatal(err)
		}
		targets := []struct{ stream, consumer, subject string }{
			{sp.InStream(), sp.RouterConsumer(), sp.In("acme", "turn", subjects.KindUse)},
			{sp.ResultStream(), sp.ReorderConsumer(), sp.Result("acme", "turn", 0)},
		}
		stop := make(chan struct{})
		stored := make([]atomic.Int64, len(targets))
		var wg sync.WaitGroup
		for i, tg := range targets {
			wg.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					// A subject of its own each time: the result stream
					// keeps one message per subject.
					// Refused at once while no stream takes the subject
					// (no pause between tries), as a client sending again.
					if _, err := js.Publish(ctx, fmt.Sprintf("%s%d", tg.subject, n), []byte("x"), jetstream.WithRetryAttempts(0)); err == nil {
						stored[i].Add(1)
					}
				}
			})
		}
		// The publishers are running before the streams exist.
		time.Sleep(20 * time.Millisecond)
		if err := provision.Streams(ctx, js, sp, provision.Config{}); err != nil {
			t.Fatal(err)
		}
		// And keep running after: the consumer must have what the stream
		// took from the first event on.
		time.Sleep(20 * time.Millisecond)
		close(stop)
		wg.Wait()
		for i, tg := range targets {
			want := stored[i].Load()
			// What the stream holds is exact at once: an event dropped for
			// want of a consumer was never stored.
			str, err := js.Stream(ctx, tg.stream)
			if err != nil {
				t.Fatal(err)
			}
			if got := int64(str.CachedInfo().State.Msgs); got != want || want == 0 {
				t.Errorf("round %d, %s: %d events acknowledged, %d kept", round, tg.stream, want, got)
				continue
			}
			// The consumer counts them as the stream signals it of each,
			// a moment behind the acknowledgement.
			cons, err := js.Consumer(ctx, tg.stream, tg.consumer)
			if err != nil {
				t.Fatal(err)
			}
			var pending uint64
			for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				ci, err := cons.Info(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if pending = ci.NumPending; int64(pending) == want || time.Now().After(end) {
					break
				}
			}
			if int64(pending) != want {
				t.Errorf("round %d, %s: %d events kept, %d pending for %s", round, tg.stream, want, pending, tg.consumer)
			}
		}
	}
}
