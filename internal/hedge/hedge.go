// Package hedge sends a read to JetStream again while it is not answered,
// and takes the first answer.
//
// When a cluster member dies, the other members of each stream it led stay
// silent until their election timers fire (4 to 9 s); from then on they
// answer "no leader" at once until one of them is elected. A read sent in
// the silence waits for its whole bound, and one whose bound ends after
// the election holds its caller up for nothing. Sent again every step, it
// is answered within a step of the members' waking instead.
package hedge

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Every is the step between two copies of a request not answered, and
// Runs bounds the copies: together they cover a stage's request bound
// (jserr.RequestTimeout) and no more.
const (
	Every = 300 * time.Millisecond
	Runs  = 5
)

// Do runs fn, and runs it again every Every while no run has returned, at
// most Runs times in all; it returns the first run's answer and cancels
// the others' context. fn must end when its context does, and be safe to
// run more than once, with nothing of the caller's that changes meanwhile:
// a read. A run that panics answers with an error: it runs on a goroutine
// of its own, out of reach of the caller's recover.
func Do[T any](ctx context.Context, fn func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		v   T
		err error
	}
	// Buffered for every run: those that answer after the first end
	// without a reader.
	answers := make(chan answer, Runs)
	run := func() {
		go func() {
			var a answer
			defer func() {
				if p := recover(); p != nil {
					a = answer{err: fmt.Errorf("hedge: a run panicked: %v", p)}
				}
				answers <- a
			}()
			a.v, a.err = fn(ctx)
		}()
	}
	run()
	step := time.NewTicker(Every)
	defer step.Stop()
	for runs := 1; ; {
		select {
		case a := <-answers:
			return a.v, a.err
		case <-step.C:
			select {
			case a := <-answers:
				// Both were ready: no copy once an answer came.
				return a.v, a.err
			default:
			}
			if runs < Runs {
				run()
				runs++
			}
		}
	}
}

// Reads returns s with its message reads — GetMsg and
// GetLastMsgForSubject — sent again while unanswered (Do). A stage holds
// its streams so wrapped once, and its reads stay as they were written.
func Reads(s jetstream.Stream) jetstream.Stream { return reads{s} }

type reads struct{ jetstream.Stream }

func (r reads) GetMsg(ctx context.Context, seq uint64, opts ...jetstream.GetMsgOpt) (*jetstream.RawStreamMsg, error) {
	return Do(ctx, func(ctx context.Context) (*jetstream.RawStreamMsg, error) { return r.Stream.GetMsg(ctx, seq, opts...) })
}

func (r reads) GetLastMsgForSubject(ctx context.Context, subject string) (*jetstream.RawStreamMsg, error) {
	return Do(ctx, func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
		return r.Stream.GetLastMsgForSubject(ctx, subject)
	})
}
