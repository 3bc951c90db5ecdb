package top

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/subjects"
)

// consumers reads the backlog of every consumer of the stage streams.
func consumers(ctx context.Context, js jetstream.JetStream, sp subjects.Space) ([]Consumer, error) {
	out := []Consumer{}
	err := provision.EachStageConsumer(ctx, js, sp, func(stage, stream string, ci *jetstream.ConsumerInfo) {
		out = append(out, Consumer{
			Stage: stage, Stream: stream, Consumer: ci.Name,
			Pending: ci.NumPending, AckPending: ci.NumAckPending, Redelivered: ci.NumRedelivered, Waiting: ci.NumWaiting,
		})
	})
	if err != nil {
		return out, fmt.Errorf("top: %w", err)
	}
	return out, nil
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
		p, err := sp.ParseApproval(subject)
		if err != nil || p.Kind != "request" || !open[sp.LeaseKey(p.Tenant, p.Turn)][p.Seq] {
			continue
		}
		if _, decided := info.State.Subjects[sp.ApprovalDecision(p.Tenant, p.Turn, p.Seq)]; !decided {
			n++
		}
	}
	return n, nil
}
