// Package hedge sends a request to JetStream again while it is not
// answered, and takes the first answer.
//
// When a cluster member dies, the other members of each stream it led stay
// silent until their election timers fire (4 to 9 s); from then on they
// answer "no leader" at once until one of them is elected, and a publish
// to a subject that clients also subscribe to (a turn's out subject) is
// not answered at all until then. A request sent in the silence waits for
// its whole bound, and one whose bound ends after the election holds its
// caller up for nothing. Sent again every step, it is answered within a
// step of the stream's return instead.
package hedge

import (
	"context"
	"time"
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
// run more than once: a read, a publish deduplicated by its message id,
// or one refused as a conflict once an earlier copy is stored.
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
			v, err := fn(ctx)
			answers <- answer{v, err}
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
			if runs < Runs {
				run()
				runs++
			}
		}
	}
}
