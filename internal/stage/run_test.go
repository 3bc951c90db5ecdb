package stage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/stage"
)

// A handler that returns nil has its message acked: it is not delivered
// again, nothing is answered or dead-lettered.
func TestNilAcks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 5)
	var got, answers recorder
	spec := e.spec()
	spec.Answer = answers.answerer(nil)
	e.run(spec, got.handler(func(*stage.Msg) error { return nil }))
	e.use("t1", 0)

	s := got.wait(t, "the handler", 1)
	if s[0].turn != "t1" || s[0].seq != 0 || s[0].delivered != 1 || s[0].last || !s[0].data {
		t.Errorf("handler saw %+v", s[0])
	}
	e.settled(1)
	got.stays(t, "deliveries", 1)
	if ci := e.info(); ci.NumRedelivered != 0 || ci.Delivered.Consumer != 1 {
		t.Errorf("consumer delivered %d (%d redelivered), want 1", ci.Delivered.Consumer, ci.NumRedelivered)
	}
	if n := answers.len(); n != 0 {
		t.Errorf("%d answers, want none", n)
	}
	if dl := e.deadLetters(tenant); len(dl) != 0 {
		t.Errorf("%d dead letters, want none", len(dl))
	}
}

// An unclassified error is retried with the back-off until the last
// delivery, where the call is answered with why the stage gave up and the
// message is dead-lettered.
func TestErrorRetriedThenGivenUp(t *testing.T) {
	t.Parallel()
	const maxDeliver = 3
	e := newEnv(t, maxDeliver)
	errBoom := errors.New("boom")
	var got, answers recorder
	spec := e.spec()
	spec.Backoff = stage.Backoff{Initial: 50 * time.Millisecond, Max: 100 * time.Millisecond}
	spec.Answer = answers.answerer(nil)
	e.run(spec, got.handler(func(*stage.Msg) error { return fmt.Errorf("handling: %w", errBoom) }))
	subj := e.use("t1", 2)

	s := got.wait(t, "every delivery", maxDeliver)
	for i, d := range s {
		if d.delivered != i+1 || d.last != (i+1 == maxDeliver) {
			t.Errorf("delivery %d: Delivered %d, Last %v", i+1, d.delivered, d.last)
		}
		if i > 0 {
			// The back-off is a floor: the server may redeliver later, never sooner.
			if want := spec.Backoff.Delay(i); d.at.Sub(s[i-1].at) < want-5*time.Millisecond {
				t.Errorf("delivery %d came %v after the one before, under the back-off's %v", i+1, d.at.Sub(s[i-1].at), want)
			}
		}
	}
	a := answers.wait(t, "the answer", 1)
	if len(a) != 1 {
		t.Fatalf("%d answers, want 1", len(a))
	}
	cause := a[0].cause
	if !errors.Is(cause, errBoom) {
		t.Errorf("cause %v does not wrap the handler's error", cause)
	}
	if want := fmt.Sprintf("gave up after %d deliveries", maxDeliver); !strings.Contains(cause.Error(), want) {
		t.Errorf("cause %q does not say %q", cause, want)
	}
	if a[0].seq != 2 || a[0].delivered != maxDeliver || !a[0].last {
		t.Errorf("answered %+v", a[0])
	}
	dl := e.waitDeadLetters(tenant, 1)
	checkDeadLetter(t, dl[0], subj, cause.Error())
	e.settled(1)
	got.stays(t, "deliveries", maxDeliver)
	answers.stays(t, "answers", 1)
}

// Fail answers the call once and dead-letters the message, which is not
// delivered again.
func TestFail(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 5)
	errBad := errors.New("this call can never run")
	var got, answers recorder
	spec := e.spec()
	spec.Answer = answers.answerer(nil)
	e.run(spec, got.handler(func(*stage.Msg) error { return stage.Fail(errBad) }))
	subj := e.use("t1", 1)

	a := answers.wait(t, "the answer", 1)
	if !errors.Is(a[0].cause, errBad) || a[0].seq != 1 || a[0].delivered != 1 {
		t.Errorf("answered %+v", a[0])
	}
	dl := e.waitDeadLetters(tenant, 1)
	checkDeadLetter(t, dl[0], subj, errBad.Error())
	e.settled(1)
	got.stays(t, "deliveries", 1)
	answers.stays(t, "answers", 1)
}

// Drop dead-letters the message and answers nothing.
func TestDrop(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 5)
	errGone := errors.New("already answered")
	var got, answers recorder
	spec := e.spec()
	spec.Answer = answers.answerer(nil)
	e.run(spec, got.handler(func(*stage.Msg) error { return stage.Drop(errGone) }))
	subj := e.use("t1", 0)

	dl := e.waitDeadLetters(tenant, 1)
	checkDeadLetter(t, dl[0], subj, errGone.Error())
	e.settled(1)
	got.stays(t, "deliveries", 1)
	if n := answers.len(); n != 0 {
		t.Errorf("%d answers, want none", n)
	}
}

// Leave neither acks nor dead-letters: the message comes back after the
// consumer's AckWait.
func TestLeave(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 5)
	var got, answers recorder
	spec := e.spec()
	spec.Answer = answers.answerer(nil)
	e.run(spec, got.handler(func(m *stage.Msg) error {
		if m.Delivered == 1 {
			return stage.Leave()
		}
		return nil
	}))
	e.use("t1", 0)

	s := got.wait(t, "the redelivery", 2)
	if s[1].delivered != 2 {
		t.Errorf("second delivery has Delivered %d", s[1].delivered)
	}
	// Left, the message waited out the AckWait: no nak brought it back sooner.
	// (Half of it: the first delivery may have reached the handler late.)
	if gap := s[1].at.Sub(s[0].at); gap < ackWait/2 {
		t.Errorf("redelivered %v after it was left, before the AckWait of %v", gap, ackWait)
	}
	e.settled(1)
	if n := answers.len(); n != 0 {
		t.Errorf("%d answers, want none", n)
	}
	if dl := e.deadLetters(tenant); len(dl) != 0 {
		t.Errorf("%d dead letters, want none", len(dl))
	}
}

// Leave on the last delivery cannot leave the message for anyone: the
// server will not deliver it again. It is a failure then, so the call is
// answered rather than lost.
func TestLeaveOnLastDelivery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1)
	var got, answers recorder
	spec := e.spec()
	spec.Answer = answers.answerer(nil)
	e.run(spec, got.handler(func(*stage.Msg) error { return stage.Leave() }))
	subj := e.use("t1", 0)

	a := answers.wait(t, "the answer", 1)
	if a[0].cause == nil || !strings.Contains(a[0].cause.Error(), "last delivery") {
		t.Errorf("cause %v does not say it was the last delivery", a[0].cause)
	}
	dl := e.waitDeadLetters(tenant, 1)
	checkDeadLetter(t, dl[0], subj, a[0].cause.Error())
	got.stays(t, "deliveries", 1)
}

// A panicking handler fails its message, and the stage carries on.
func TestPanic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 5)
	var got, answers recorder
	spec := e.spec()
	spec.Answer = answers.answerer(nil)
	e.run(spec, got.handler(func(m *stage.Msg) error {
		if m.Subject.Turn == "bad" {
			panic("kaboom")
		}
		return nil
	}))
	subj := e.use("bad", 0)
	e.use("good", 0)

	a := answers.wait(t, "the answer", 1)
	if c := a[0].cause; c == nil || !strings.Contains(c.Error(), "panicked") || !strings.Contains(c.Error(), "kaboom") {
		t.Errorf("cause %v does not say the handler panicked with kaboom", c)
	}
	if a[0].turn != "bad" {
		t.Errorf("answered turn %q", a[0].turn)
	}
	dl := e.waitDeadLetters(tenant, 1)
	checkDeadLetter(t, dl[0], subj, a[0].cause.Error())
	e.settled(2)
	got.stays(t, "deliveries", 2)
	for _, s := range got.all() {
		if s.delivered != 1 {
			t.Errorf("turn %s delivered %d times", s.turn, s.delivered)
		}
	}
	answers.stays(t, "answers", 1)
}

// An answer that fails is retried with the message while it has
// deliveries left: the handler runs again, and the dead letter waits for
// an answer that succeeds.
func TestAnswerFailsThenSucceeds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 5)
	errBad := errors.New("bad call")
	var got, answers recorder
	spec := e.spec()
	spec.Answer = answers.answerer(func(m *stage.Msg) error {
		if m.Delivered == 1 {
			return errors.New("result stream unavailable")
		}
		return nil
	})
	e.run(spec, got.handler(func(*stage.Msg) error { return stage.Fail(errBad) }))
	subj := e.use("t1", 0)

	dl := e.waitDeadLetters(tenant, 1)
	checkDeadLetter(t, dl[0], subj, errBad.Error())
	e.settled(1)
	got.stays(t, "deliveries", 2)
	a := answers.all()
	if len(a) != 2 || a[0].delivered != 1 || a[1].delivered != 2 {
		t.Errorf("answers %+v, want one on each of deliveries 1 and 2", a)
	}
}

// An answer that fails on the last delivery leaves no delivery to retry
// with: the message is dead-lettered anyway.
func TestAnswerFailsOnLastDelivery(t *testing.T) {
	t.Parallel()
	const maxDeliver = 3
	e := newEnv(t, maxDeliver)
	errBad := errors.New("bad call")
	var got, answers recorder
	spec := e.spec()
	spec.Answer = answers.answerer(func(*stage.Msg) error { return errors.New("result stream unavailable") })
	e.run(spec, got.handler(func(*stage.Msg) error { return stage.Fail(errBad) }))
	subj := e.use("t1", 0)

	dl := e.waitDeadLetters(tenant, 1)
	checkDeadLetter(t, dl[0], subj, errBad.Error())
	e.settled(1)
	got.stays(t, "deliveries", maxDeliver)
	a := answers.all()
	if len(a) != maxDeliver {
		t.Fatalf("%d answers, want one per delivery (%d)", len(a), maxDeliver)
	}
	for i, s := range a {
		if s.delivered != i+1 || s.last != (i+1 == maxDeliver) {
			t.Errorf("answer %d on delivery %d (last %v)", i+1, s.delivered, s.last)
		}
	}
}

// Run returns when its context is cancelled; a message already handed to
// the handler finishes on a context that is not, while Msg.Recv ends.
func TestRunStops(t *testing.T) {
	t.Parallel()
	for _, lanes := range []int{0, 2} {
		t.Run(fmt.Sprintf("lanes=%d", lanes), func(t *testing.T) {
			t.Parallel()
			e := newEnvWait(t, 5, bound)
			started := make(chan *stage.Msg, 1)
			release := make(chan struct{})
			handlerErr := make(chan error, 1)
			spec := e.spec()
			spec.Lanes = lanes
			stop := e.run(spec, func(ctx context.Context, m *stage.Msg) error {
				started <- m
				<-release
				if ctx.Err() != nil {
					handlerErr <- fmt.Errorf("handler's context ended with Run's: %w", ctx.Err())
				} else if m.Recv.Err() == nil {
					handlerErr <- errors.New("Msg.Recv did not end with Run's context")
				} else {
					handlerErr <- nil
				}
				return nil
			})
			e.use("t1", 0)

			var m *stage.Msg
			select {
			case m = <-started:
			case <-time.After(bound):
				t.Fatal("the handler was not called")
			}
			stopped := make(chan error, 1)
			go func() { stopped <- stop() }()
			select {
			case <-m.Recv.Done():
			case <-time.After(bound):
				t.Fatal("Msg.Recv did not end when Run's context was cancelled")
			}
			select {
			case err := <-stopped:
				t.Fatalf("Run returned (%v) while its handler was still running", err)
			case <-time.After(100 * time.Millisecond):
			}
			close(release)
			if err := <-handlerErr; err != nil {
				t.Error(err)
			}
			if err := <-stopped; err != nil {
				t.Errorf("Run: %v", err)
			}
			// The handler's nil was acked after Run's context ended.
			e.settled(1)
		})
	}
}

// Run with nothing to do returns promptly when its context is cancelled.
func TestRunStopsIdle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 5)
	stop := e.run(e.spec(), func(context.Context, *stage.Msg) error { return nil })
	time.Sleep(100 * time.Millisecond)
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
}
