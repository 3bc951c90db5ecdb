// Package stage has what the pipeline's stages share around consuming: a
// consume loop that hands messages to per-turn lanes, and dead-lettering.
//
// Lanes serialize the messages of one turn inside one instance (fewer lease
// conflicts, natural per-turn order) while different turns run in parallel.
package stage

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// Handler processes one message; it owns the ack.
type Handler func(ctx context.Context, m jetstream.Msg)

// KeyFunc gives the lane key of a message (usually tenant and turn).
type KeyFunc func(m jetstream.Msg) string

// Lanes runs handlers on n goroutines, the same key always on the same one.
type Lanes struct {
	seed  maphash.Seed
	lanes []chan jetstream.Msg
	wg    sync.WaitGroup
}

// NewLanes starts n lanes running h until Close.
func NewLanes(ctx context.Context, n, depth int, h Handler) *Lanes {
	if n <= 0 {
		n = 1
	}
	l := &Lanes{seed: maphash.MakeSeed(), lanes: make([]chan jetstream.Msg, n)}
	for i := range l.lanes {
		ch := make(chan jetstream.Msg, depth)
		l.lanes[i] = ch
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for m := range ch {
				h(ctx, m)
			}
		}()
	}
	return l
}

// Submit queues m on the lane of key; it blocks when that lane is full,
// which is the back-pressure the consumer's MaxAckPending expects.
func (l *Lanes) Submit(key string, m jetstream.Msg) {
	l.lanes[maphash.String(l.seed, key)%uint64(len(l.lanes))] <- m
}

// Close stops accepting messages and waits for the queued ones.
func (l *Lanes) Close() {
	for _, ch := range l.lanes {
		close(ch)
	}
	l.wg.Wait()
}

// Consume runs fn for every message of cons until ctx is done, then stops
// the consume context and returns. Errors of the pull are logged, not fatal:
// the client re-pulls by itself.
func Consume(ctx context.Context, cons jetstream.Consumer, batch int, log *slog.Logger, fn func(jetstream.Msg)) error {
	cc, err := cons.Consume(fn,
		jetstream.PullMaxMessages(batch),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			if ctx.Err() == nil && !errors.Is(err, jetstream.ErrNoHeartbeat) {
				log.Debug("consume", "err", err)
			}
		}))
	if err != nil {
		return fmt.Errorf("stage: consume: %w", err)
	}
	<-ctx.Done()
	cc.Stop()
	<-cc.Closed()
	return nil
}

// DeadLetter copies m to the stage's dead-letter subject with the reason and
// terminates it, so a poison message stops being redelivered and the stage
// carries on. tenant may be empty when the subject did not say.
func DeadLetter(ctx context.Context, js jetstream.JetStream, sp subjects.Space, tenant, stageName string, m jetstream.Msg, reason error, log *slog.Logger) {
	if tenant == "" || subjects.CheckToken("tenant", tenant) != nil {
		tenant = subjects.DefaultTenant
	}
	dl := nats.NewMsg(sp.DLQ(tenant, stageName))
	// Only the event's own headers travel: a producer's Nats-Expected-* or
	// Nats-Msg-Id would make the copy fail or be dropped as a duplicate.
	for k, v := range schemas.EventHeaders(m.Headers()) {
		dl.Header[k] = v
	}
	dl.Header.Set(schemas.HeaderDLQReason, reason.Error())
	dl.Header.Set(schemas.HeaderDLQSubject, m.Subject())
	dl.Header.Set(schemas.HeaderDLQStage, stageName)
	dl.Data = m.Data()
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := js.PublishMsg(pctx, dl); err != nil {
		log.Error("dead-letter publish failed", "subject", m.Subject(), "reason", reason, "err", err)
	}
	log.Warn("dead-lettered", "stage", stageName, "subject", m.Subject(), "reason", reason)
	_ = m.TermWithReason(truncate(reason.Error(), 200))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// jsErrWrongLastSequenceReplicated is the conflict code of a replicated
// stream's pre-proposal check; nats.go names only the R1 code (10071).
const jsErrWrongLastSequenceReplicated = 10164

// IsConflict reports whether a publish failed its expected-last-sequence
// check: 10071 on a single node, 10164 on a replicated stream.
func IsConflict(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jsErrWrongLastSequenceReplicated
	}
	return false
}
