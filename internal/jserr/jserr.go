// Package jserr classifies JetStream failures by what the server says, never
// by the message text: a compare-and-set publish that lost, and a write to a
// stream that no longer exists.
package jserr

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Conflict reports whether a publish failed its expected-last-sequence
// check, by the server's error code: 10071 on a single node, 10164 on a
// replicated stream (nats.go's own constants).
func Conflict(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant
	}
	return false
}

// Gone reports whether a write failed for a reason no retry can cure: a
// closed connection, or a stream or bucket that was deleted. A deleted
// stream shows itself as "no responders" to a direct get or a publish —
// which a restarting server gives too — so that case asks the server
// whether the streams the write needs still exist; while it cannot
// answer, the failure counts as passing. The questions share one short
// bound, goneWait: in a failover the members of a stream that lost its
// leader stay silent until their election timers fire, and a question
// waiting for them holds up the caller's retry — unbounded, for nats.go's
// default five seconds each, long after the stream is back. A deleted
// stream is answered at once by the cluster's meta leader.
func Gone(ctx context.Context, js jetstream.JetStream, err error, streams ...string) bool {
	switch {
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, jetstream.ErrStreamNotFound), errors.Is(err, jetstream.ErrBucketNotFound):
		return true
	case !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, jetstream.ErrNoStreamResponse):
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, goneWait)
	defer cancel()
	for _, name := range streams {
		if _, err := js.Stream(ctx, name); errors.Is(err, jetstream.ErrStreamNotFound) {
			return true
		}
	}
	return false
}

// goneWait bounds Gone's questions, all of them together.
const goneWait = 300 * time.Millisecond

// codeStoreRefused is the server's JSStreamStoreFailedF (10077). It answers
// a publish only when a stream limit refused the message (messages, bytes,
// messages per subject, size); a failed disk write gets no answer at all.
const codeStoreRefused jetstream.ErrorCode = 10077

// Full reports whether a publish was refused by a limit of the stream, such
// as the in stream's bound on events waiting for the router: the publisher
// should slow down and send it again.
func Full(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == codeStoreRefused
}

// codeNoPeers is the server's JSClusterNoPeersErrF (10005): no servers to
// place a replicated stream on, as while a cluster's members are still
// joining.
const codeNoPeers jetstream.ErrorCode = 10005

// Unavailable reports whether JetStream could not serve a request for now:
// no server answered, the request (or an asynchronous publish's ack) timed
// out, the connection dropped while an asynchronous publish waited for its
// ack (the server it was on died: the message may or may not be stored, so
// it is sent again under its message id), the server answered 503 (its
// JetStream or the cluster's meta leader is not ready), or a cluster still
// lacks the members a replicated stream needs. Starting against a cluster
// that is forming, or a server that is restarting, gives these; the request
// may be made again.
func Unavailable(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code == 503 || apiErr.ErrorCode == codeNoPeers
	}
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, jetstream.ErrAsyncPublishTimeout) || errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) ||
		errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount)
}

// RequestTimeout bounds one JetStream request of a stage — a publish, a
// lease write, a read — when the caller's context allows longer. A stream
// electing a new leader after a cluster member died does not answer
// requests made meanwhile, not even with "no responders": without a bound
// of its own such a request waits for the caller's whole deadline (the
// executor's is two minutes) and holds its turn up long after the stream
// is back. Made again, it goes through within a retry's step of the
// election. Writes are safe to make again: each is a compare-and-set,
// deduplicated by id, or refused as a second message on its subject.
const RequestTimeout = 1500 * time.Millisecond

// Bound is ctx with RequestTimeout as its deadline, unless ctx ends sooner.
func Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, RequestTimeout)
}

// Retry runs fn until it succeeds or fails otherwise than Unavailable, for
// at most limit, pausing pause between tries; retrying, when set, is told
// of each failure that is tried again. It returns fn's last error.
func Retry(ctx context.Context, limit, pause time.Duration, retrying func(error), fn func() error) error {
	deadline := time.Now().Add(limit)
	for {
		err := fn()
		if err == nil || !Unavailable(err) || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		if retrying != nil {
			retrying(err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}
