package stage

import (
	"errors"
	"time"
)

// kind is how the runtime treats a handler's error.
type kind int

const (
	kindRetry kind = iota
	kindFail
	kindDrop
	kindLeave
)

// classified is a handler error with the treatment it asks for.
type classified struct {
	kind  kind
	after time.Duration // kindRetry: a delay of the handler's own, 0 for the back-off's
	err   error
}

func (c *classified) Error() string {
	if c.err == nil {
		return "stage: " + [...]string{"retry", "fail", "drop", "leave"}[c.kind]
	}
	return c.err.Error()
}

func (c *classified) Unwrap() error { return c.err }

// Retry asks for the message again after the back-off's delay. An error a
// handler returns unclassified is a retry too. On the last delivery a
// retry is a failure.
func Retry(err error) error { return &classified{kind: kindRetry, err: err} }

// RetryAfter is Retry with a delay of the handler's own (a result waiting
// behind a gap knows better than the back-off when to look again).
func RetryAfter(err error, after time.Duration) error {
	return &classified{kind: kindRetry, after: after, err: err}
}

// Fail gives up on the message: the call it names is answered with an
// error result saying why (Spec.Answer), and the message is dead-lettered
// with err as the reason.
func Fail(err error) error { return &classified{kind: kindFail, err: err} }

// Drop dead-letters the message with err as the reason and answers
// nothing: the handler answered the call itself, or there is none.
func Drop(err error) error { return &classified{kind: kindDrop, err: err} }

// Leave leaves the message unacknowledged, for another instance to take
// (a parked call of a stage that is shutting down). On the last delivery
// there is no other instance to take it, so Leave is a failure there.
func Leave() error { return &classified{kind: kindLeave} }

// MalformedError is the failure of a message that did not decode (or has
// a field over a limit); Err is the decoder's *schemas.FieldError.
type MalformedError struct{ Err error }

func (e *MalformedError) Error() string { return e.Err.Error() }

func (e *MalformedError) Unwrap() error { return e.Err }

// classify reads a handler's error.
func classify(err error) *classified {
	var c *classified
	if errors.As(err, &c) {
		return c
	}
	return &classified{kind: kindRetry, err: err}
}

// errClass names the class of a handler's error in a span (error.type):
// a malformed event, or the treatment the error asked for; "" for none.
func errClass(err error) string {
	if err == nil {
		return ""
	}
	if _, ok := errors.AsType[*MalformedError](err); ok {
		return "malformed"
	}
	return [...]string{"retry", "fail", "drop", "leave"}[classify(err).kind]
}
