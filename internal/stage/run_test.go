package stage_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
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
// message is dead-lettered. Each delivery's first retries run in the
// process (Attempt 2, 3, 4 of the same delivery); then the message is
// nak'ed and comes back as the next delivery.
func TestErrorRetriedThenGivenUp(t *testing.T) {
	t.Parallel()
	const maxDeliver = 3
	const perDelivery = 4 // the handling and its in-process retries
	e := newEnv(t, maxDeliver)
	errBoom := errors.New("boom")
	var got, answers recorder
	spec := e.spec()
	spec.Backoff = stage.Backoff{Initial: 50 * time.Millisecond, Max: 100 * time.Millisecond}
	spec.Answer = answers.answerer(nil)
	e.run(spec, got.handler(func(*stage.Msg) error { return fmt.Errorf("handling: %w", errBoom) }))
	subj := e.use("t1", 2)

	runs := (maxDeliver-1)*perDelivery + 1
	s := got.wait(t, "every handling", runs)
	for i, d := range s {
		delivery, attempt := i/perDelivery+1, i%perDelivery+1
		if d.delivered != delivery || d.attempt != attempt || d.last != (delivery == maxDeliver) {
			t.Errorf("handling %d: Delivered %d, Attempt %d, Last %v; want %d, %d, %v", i+1, d.delivered, d.attempt, d.last, delivery, attempt, delivery == maxDeliver)
		}
		if i > 0 {
			// The back-off is a floor: a retry may come later, never sooner.
			want := spec.Backoff.Delay(s[i-1].attempt)
			if attempt == 1 {
				want = spec.Backoff.Delay(s[i-1].delivered)
			}
			if d.at.Sub(s[i-1].at) < want-5*time.Millisecond {
				t.Errorf("handling %d came %v after the one before, under the back-off's %v", i+1, d.at.Sub(s[i-1].at), want)
			}
		}
	}
	if ci := e.info(); ci.Delivered.Consumer != maxDeliver {
		t.Errorf("consumer delivered %d times, want %d: in-process retries are not deliveries", ci.Delivered.Consumer, maxDeliver)
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
	got.stays(t, "handlings", runs)
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

// A retry waiting in the process when the stage stops goes back to the
// server at once: the next instance gets the message, nothing is lost.
func TestRetryInProcessHandedBackOnStop(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 5)
	var first, second recorder
	stop := e.run(e.spec(), first.handler(func(*stage.Msg) error {
		return stage.RetryAfter(errors.New("not yet"), 400*time.Millisecond)
	}))
	e.use("t1", 0)
	first.wait(t, "the first handling", 1)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	first.stays(t, "handlings by the stopped stage", 1)
	e.run(e.spec(), second.handler(func(*stage.Msg) error { return nil }))
	s := second.wait(t, "the handling by the next instance", 1)
	if s[0].delivered != 2 || s[0].attempt != 1 {
		t.Errorf("next instance saw Delivered %d, Attempt %d; want 2, 1", s[0].delivered, s[0].attempt)
	}
	e.settled(1)
}

// TestDeadLetteredOnce: a poison message dead-lettered again (its stage
// died between the copy and the termination, and it came back) leaves one
// dead letter, not two.
func TestDeadLetteredOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 5)
	subj := e.use("t1", 1)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	batch, err := e.cons.Fetch(1, jetstream.FetchMaxWait(bound))
	if err != nil {
		t.Fatal(err)
	}
	var m jetstream.Msg
	for m = range batch.Messages() {
	}
	if m == nil {
		t.Fatalf("no message: %v", batch.Error())
	}
	for range 2 {
		if err := stage.DeadLetter(ctx, e.js, sp, tenant, stageName, m, errors.New("poison"), slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
	}
	// Both copies were acknowledged: the stream holds all it will.
	dl := e.waitDeadLetters(tenant, 1)
	checkDeadLetter(t, dl[0], subj, "poison")
}
