package jserr_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/apimember"
	"github.com/toolwire/toolwire/internal/jserr"
)

// TestGoneIsBounded: while a cluster fails over, the members of a stream
// that lost its leader stay silent until their election timers fire. The
// question whether the streams still exist must not hold the caller for
// nats.go's default timeout per stream (an executor's result once waited
// five seconds here, two seconds after the stream was back): all of it
// has one short bound, and silence counts as "not gone".
func TestGoneIsBounded(t *testing.T) {
	// A member that has not noticed its leader's death: it hears the
	// JetStream API and answers nothing.
	js := apimember.Start(t, map[string]nats.MsgHandler{"$JS.API.>": func(*nats.Msg) {}})
	start := time.Now()
	if jserr.Gone(context.Background(), js, jetstream.ErrNoStreamResponse, "A", "B", "C") {
		t.Fatal("Gone = true for streams whose members did not answer")
	}
	// Unbounded, three silent questions take 15 s; the bound is 300 ms.
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Gone took %s with silent members", took)
	}
}
