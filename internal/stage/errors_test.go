package stage_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// malformed runs a stage whose handler must not be called on one message
// that does not decode under limits, and returns the answer's
// *stage.MalformedError, what the answerer saw and the dead letter's reason.
func malformed(t *testing.T, limits schemas.Limits, publish func(e *env) string) (*stage.MalformedError, seen) {
	t.Helper()
	e := newEnv(t, 5)
	var got, answers recorder
	spec := e.spec()
	spec.Limits = limits
	spec.Answer = answers.answerer(nil)
	e.run(spec, got.handler(func(*stage.Msg) error { return nil }))
	subj := publish(e)

	a := answers.wait(t, "the answer", 1)
	var me *stage.MalformedError
	if !errors.As(a[0].cause, &me) {
		t.Fatalf("cause %v (%T) is no *stage.MalformedError", a[0].cause, a[0].cause)
	}
	dl := e.waitDeadLetters(tenant, 1)
	checkDeadLetter(t, dl[0], subj, a[0].cause.Error())
	e.settled(1)
	answers.stays(t, "answers", 1)
	if n := got.len(); n != 0 {
		t.Errorf("the handler was called %d times on a message that did not decode", n)
	}
	return me, a[0]
}

// A body that is not msgpack fails the message before the handler: the
// answer names the field, and keeps the call's seq from ce-seq.
func TestUndecodableBody(t *testing.T) {
	t.Parallel()
	me, a := malformed(t, schemas.Limits{}, func(e *env) string {
		h, _ := testenv.Encode(t, "t1", 3, &schemas.ToolUse{Seq: 3, ToolUseID: "toolu_1", Name: "Echo", Input: schemas.RawJSON(`{}`), Complete: true})
		subj := sp.In(tenant, "t1", subjects.KindUse)
		e.publishRaw(subj, h, []byte{0xc1, 0xc1})
		return subj
	})
	var fe *schemas.FieldError
	if !errors.As(me, &fe) || fe.Field != "data" {
		t.Errorf("malformed error %v names no field data", me)
	}
	if !strings.Contains(me.Error(), "data") {
		t.Errorf("message %q does not name the field", me)
	}
	if a.seq != 3 {
		t.Errorf("Meta.Seq %d, want 3 from ce-seq", a.seq)
	}
	if a.data {
		t.Error("Data set on a body that did not decode")
	}
	if a.turn != "t1" {
		t.Errorf("Subject.Turn %q, want t1", a.turn)
	}
}

// A seq over Limits.MaxCallsPerTurn fails the message before the handler:
// the answer names ce-seq and the limit, and Meta.Seq stays -1 (a seq over
// the limit is no call the lease can hold).
func TestOverLimit(t *testing.T) {
	t.Parallel()
	me, a := malformed(t, schemas.Limits{MaxCallsPerTurn: 4}, func(e *env) string {
		return e.use("t1", 9)
	})
	var fe *schemas.FieldError
	if !errors.As(me, &fe) || fe.Field != "ce-seq" || fe.Limit != schemas.LimitCalls {
		t.Errorf("malformed error %v: want field ce-seq over %s", me, schemas.LimitCalls)
	}
	for _, want := range []string{"ce-seq", schemas.LimitCalls, "4"} {
		if !strings.Contains(me.Error(), want) {
			t.Errorf("message %q does not say %q", me, want)
		}
	}
	if a.seq != -1 {
		t.Errorf("Meta.Seq %d, want -1", a.seq)
	}
}

// A data field over a limit fails the message before the handler too; the
// seq, valid, is kept for the answer, and so is the data as decoded.
func TestDataOverLimit(t *testing.T) {
	t.Parallel()
	me, a := malformed(t, schemas.Limits{MaxNameBytes: 8}, func(e *env) string {
		subj := sp.In(tenant, "t1", subjects.KindUse)
		h, body := testenv.Encode(t, "t1", 2, &schemas.ToolUse{Seq: 2, ToolUseID: "toolu_1", Name: "a_tool_name_too_long", Input: schemas.RawJSON(`{}`), Complete: true})
		e.publishRaw(subj, h, body)
		return subj
	})
	var fe *schemas.FieldError
	if !errors.As(me, &fe) || fe.Field != "name" || fe.Limit != schemas.LimitName {
		t.Errorf("malformed error %v: want field name over %s", me, schemas.LimitName)
	}
	for _, want := range []string{"name", schemas.LimitName, "8"} {
		if !strings.Contains(me.Error(), want) {
			t.Errorf("message %q does not say %q", me, want)
		}
	}
	if a.seq != 2 || !a.data {
		t.Errorf("answered with Meta.Seq %d (want 2), data %v (want the decoded data)", a.seq, a.data)
	}
}

// A subject the stage's Parse refuses names no turn to answer in: the
// message is dropped (dead-lettered under the default tenant), unanswered.
func TestUnparsedSubject(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 5)
	var got, answers recorder
	spec := e.spec()
	spec.Answer = answers.answerer(nil)
	e.run(spec, got.handler(func(*stage.Msg) error { return nil }))
	// The input stream takes any last token; ParseIn knows only the kinds.
	subj := "tw.acme.in.t1.bogus"
	h, body := testenv.Encode(t, "t1", 0, &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_1", Name: "Echo", Input: schemas.RawJSON(`{}`), Complete: true})
	e.publishRaw(subj, h, body)

	dl := e.waitDeadLetters(tenant, 1)
	_, perr := sp.ParseIn(subj)
	checkDeadLetter(t, dl[0], subj, perr.Error())
	e.settled(1)
	got.stays(t, "deliveries", 0)
	if n := answers.len(); n != 0 {
		t.Errorf("%d answers, want none", n)
	}
}

// Fail and Drop without an error still give up on the message with a
// reason, rather than crash the stage on a nil one.
func TestGiveUpWithoutError(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 5)
	var got, answers recorder
	spec := e.spec()
	spec.Answer = answers.answerer(nil)
	e.run(spec, got.handler(func(m *stage.Msg) error {
		if m.Subject.Turn == "fail" {
			return stage.Fail(nil)
		}
		return stage.Drop(nil)
	}))
	e.use("fail", 0)
	e.use("drop", 0)

	dl := e.waitDeadLetters(tenant, 2)
	e.settled(2)
	reasons := map[string]string{}
	for _, d := range dl {
		reasons[d.Header.Get(schemas.HeaderDLQSubject)] = d.Header.Get(schemas.HeaderDLQReason)
	}
	for turn, want := range map[string]string{"fail": "stage: fail", "drop": "stage: drop"} {
		if got := reasons[sp.In(tenant, turn, subjects.KindUse)]; got != want {
			t.Errorf("turn %s dead-lettered with %q, want %q", turn, got, want)
		}
	}
	a := answers.all()
	if len(a) != 1 || a[0].turn != "fail" || a[0].cause == nil {
		t.Errorf("answers %+v, want one for turn fail with a cause", a)
	}
}
