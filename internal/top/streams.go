package top

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/subjects"
)

// consumers reads the backlog of every consumer of the stage streams.
func consumers(ctx context.Context, js jetstream.JetStream, sp subjects.Space) ([]Consumer, error) {
	out := []Consumer{}
	var errs []error
	for _, st := range []struct{ stage, stream string }{
		{"router", sp.InStream()}, {"executor", sp.ExecStream()}, {"reorder", sp.ResultStream()},
	} {
		s, err := js.Stream(ctx, st.stream)
		if err != nil {
			errs = append(errs, fmt.Errorf("top: stream %s: %w", st.stream, err))
			continue
		}
		infos := s.ListConsumers(ctx)
		for ci := range infos.Info() {
			out = append(out, Consumer{
				Stage: st.stage, Stream: st.stream, Consumer: ci.Name,
				Pending: ci.NumPending, AckPending: ci.NumAckPending, Redelivered: ci.NumRedelivered, Waiting: ci.NumWaiting,
			})
		}
		if err := infos.Err(); err != nil {
			errs = append(errs, fmt.Errorf("top: consumers of %s: %w", st.stream, err))
		}
	}
	return out, errors.Join(errs...)
}

// deadLetters is the DLQ stream's message count.
func deadLetters(ctx context.Context, js jetstream.JetStream, sp subjects.Space) (uint64, error) {
	s, err := js.Stream(ctx, sp.DLQStream())
	if err != nil {
		return 0, fmt.Errorf("top: stream %s: %w", sp.DLQStream(), err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("top: stream %s: %w", sp.DLQStream(), err)
	}
	return info.State.Msgs, nil
}

// approvalsWaiting counts the approval requests with no decision whose
// call is still unanswered (a request its timeout refused has no decision
// either, and waits for nobody).
func approvalsWaiting(ctx context.Context, js jetstream.JetStream, sp subjects.Space, open map[string]map[int]bool) (int, error) {
	if len(open) == 0 {
		return 0, nil
	}
	s, err := js.Stream(ctx, sp.ApprovalStream())
	if err != nil {
		return 0, fmt.Errorf("top: stream %s: %w", sp.ApprovalStream(), err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(sp.ApprovalAll()))
	if err != nil {
		return 0, fmt.Errorf("top: stream %s: %w", sp.ApprovalStream(), err)
	}
	n := 0
	for subject := range info.State.Subjects {
		// prefix.tenant.approval.turn.seq.request
		t := strings.Split(subject, ".")
		if len(t) != 6 || t[5] != "request" {
			continue
		}
		seq, err := strconv.Atoi(t[4])
		if err != nil || !open[sp.LeaseKey(t[1], t[3])][seq] {
			continue
		}
		decision := strings.Join(append(t[:5:5], "decision"), ".")
		if _, decided := info.State.Subjects[decision]; !decided {
			n++
		}
	}
	return n, nil
}
