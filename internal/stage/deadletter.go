package stage

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// DeadLetter copies m to the stage's dead-letter subject with the reason and
// terminates it, so a poison message stops being redelivered and the stage
// carries on. tenant may be empty when the subject did not say. A copy the
// server refuses is an error, and m is left as it is: terminating it then
// would lose the only record of it.
func DeadLetter(ctx context.Context, js jetstream.JetStream, sp subjects.Space, tenant, stageName string, m jetstream.Msg, reason error, log *slog.Logger) error {
	if tenant == "" || subjects.CheckToken("tenant", tenant) != nil {
		tenant = subjects.DefaultTenant
	}
	dl := nats.NewMsg(sp.DLQ(tenant, stageName))
	// Only the event's own headers travel: a producer's Nats-Expected-* or
	// Nats-Msg-Id would make the copy fail or be dropped as a duplicate of
	// the event.
	for k, v := range schemas.EventHeaders(m.Headers()) {
		dl.Header[k] = v
	}
	// One dead letter however often the message comes back: a stage that
	// died between the copy and the termination copies it again.
	if meta, err := m.Metadata(); err == nil {
		dl.Header.Set(jetstream.MsgIDHeader, subjects.DeadLetterMsgID(meta.Stream, meta.Sequence.Stream))
	}
	dl.Header.Set(schemas.HeaderDLQReason, reason.Error())
	dl.Header.Set(schemas.HeaderDLQSubject, m.Subject())
	dl.Header.Set(schemas.HeaderDLQStage, stageName)
	dl.Data = m.Data()
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := js.PublishMsg(pctx, dl); err != nil {
		return fmt.Errorf("stage: dead-letter %s: %w", m.Subject(), err)
	}
	log.Warn("dead-lettered", "stage", stageName, "subject", m.Subject(), "tenant", tenant, "reason", reason)
	_ = m.TermWithReason(truncate(reason.Error(), 200))
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
