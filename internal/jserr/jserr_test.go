package jserr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestUnavailable: the failures a cluster's failover gives are worth a
// retry, wrapped or not; a refusal on the message's merits is not.
func TestUnavailable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		// An asynchronous publish whose connection dropped before its ack
		// (the member it was on was killed): the client once gave up on
		// such a turn.
		{nats.ErrDisconnected, true},
		{fmt.Errorf("client: publish x: %w", nats.ErrDisconnected), true},
		{nats.ErrNoResponders, true},
		{jetstream.ErrNoStreamResponse, true},
		{jetstream.ErrAsyncPublishTimeout, true},
		{context.DeadlineExceeded, true},
		{&jetstream.APIError{Code: 503, ErrorCode: 10008}, true},
		{&jetstream.APIError{Code: 400, ErrorCode: 10071}, false},
		{nats.ErrMaxPayload, false},
		{errors.New("nope"), false},
	} {
		if got := Unavailable(c.err); got != c.want {
			t.Errorf("Unavailable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
