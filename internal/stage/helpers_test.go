package stage_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

var sp = subjects.Default()

const (
	tenant    = subjects.DefaultTenant
	stageName = "stagetest"
	// bound is how long a test waits for what must happen: generous, the
	// machine is shared.
	bound = 30 * time.Second
	// ackWait is the consumer's: a message neither acked nor nak'ed comes
	// back after it.
	ackWait = time.Second
	// quiet is how long a test watches for what must not happen (a
	// redelivery): longer than ackWait and every back-off below.
	quiet = ackWait + time.Second
)

// fast is a back-off that keeps the retries of a test short.
var fast = stage.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond}

// env is one embedded server with the pipeline's streams and a durable
// consumer on the input stream.
type env struct {
	t          *testing.T
	js         jetstream.JetStream
	cons       jetstream.Consumer
	maxDeliver int
}

// newEnv starts a server and a consumer that delivers a message at most
// maxDeliver times and takes one back after ackWait.
func newEnv(t *testing.T, maxDeliver int) *env {
	t.Helper()
	return newEnvWait(t, maxDeliver, ackWait)
}

// newEnvWait is newEnv with an AckWait of the test's own, for handlers
// that block: a redelivery while they wait would muddle what they record.
func newEnvWait(t *testing.T, maxDeliver int, wait time.Duration) *env {
	t.Helper()
	srv := testenv.Server(t)
	js := testenv.JS(t, srv, "stagetest")
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if err := provision.Streams(ctx, js, sp, provision.Config{Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	cons, err := provision.Consumer(ctx, js, sp.InStream(), stageName, sp.InAll(), provision.ConsumerConfig{AckWait: wait, MaxDeliver: maxDeliver})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, js: js, cons: cons, maxDeliver: maxDeliver}
}

// spec is a Spec on e's consumer with a fast back-off.
func (e *env) spec() stage.Spec {
	return stage.Spec{
		Stage: stageName, Space: sp, Consumer: e.cons, MaxDeliver: e.maxDeliver,
		Parse: sp.ParseIn, Backoff: fast,
	}
}

// run starts stage.Run; stop cancels it and returns Run's error, failing
// the test if Run does not return. The test's end stops it too.
func (e *env) run(spec stage.Spec, h stage.Handler) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- stage.Run(ctx, e.js, spec, h) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(bound):
				e.t.Errorf("stage.Run did not return %v after its context was cancelled", bound)
			}
		})
		return err
	}
	e.t.Cleanup(func() { _ = stop() })
	return stop
}

// use publishes a well-formed tool_use of turn (and tenant default).
func (e *env) use(turn string, seq int) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	testenv.PublishUse(e.t, ctx, e.js, turn, &schemas.ToolUse{Seq: seq, ToolUseID: "toolu_" + turn, Name: "Echo", Input: schemas.RawJSON(`{}`), Complete: true})
	return sp.In(tenant, turn, subjects.KindUse)
}

// publishRaw publishes headers and body as they are on subject.
func (e *env) publishRaw(subject string, h nats.Header, body []byte) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	testenv.Publish(e.t, ctx, e.js, subject, h, body)
}

// info is the consumer's state.
func (e *env) info() *jetstream.ConsumerInfo {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	ci, err := e.cons.Info(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return ci
}

// settled waits until the consumer has every one of n published messages
// settled: acknowledged or terminated, none pending, none to deliver.
func (e *env) settled(n uint64) {
	e.t.Helper()
	testenv.WaitFor(e.t, bound, "the consumer to settle every message", func() bool {
		ci := e.info()
		return ci.AckFloor.Stream >= n && ci.NumAckPending == 0 && ci.NumPending == 0
	})
}

// deadLetters reads the stage's dead letters of tenant.
func (e *env) deadLetters(tenant string) []*jetstream.RawStreamMsg {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	return testenv.SubjectMsgs(e.t, ctx, e.js, sp.DLQStream(), sp.DLQ(tenant, stageName))
}

// waitDeadLetters waits for n dead letters of tenant and returns them.
func (e *env) waitDeadLetters(tenant string, n int) []*jetstream.RawStreamMsg {
	e.t.Helper()
	var dl []*jetstream.RawStreamMsg
	testenv.WaitFor(e.t, bound, "dead letters", func() bool {
		dl = e.deadLetters(tenant)
		return len(dl) >= n
	})
	if len(dl) != n {
		e.t.Fatalf("%d dead letters, want %d", len(dl), n)
	}
	return dl
}

// checkDeadLetter checks the headers a dead letter carries.
func checkDeadLetter(t *testing.T, dl *jetstream.RawStreamMsg, subject, reason string) {
	t.Helper()
	if got := dl.Header.Get(schemas.HeaderDLQReason); got != reason {
		t.Errorf("dead letter reason %q, want %q", got, reason)
	}
	if got := dl.Header.Get(schemas.HeaderDLQSubject); got != subject {
		t.Errorf("dead letter subject %q, want %q", got, subject)
	}
	if got := dl.Header.Get(schemas.HeaderDLQStage); got != stageName {
		t.Errorf("dead letter stage %q, want %q", got, stageName)
	}
}

// seen is what a handler or an answerer was given.
type seen struct {
	turn      string
	seq       int
	delivered int
	attempt   int
	last      bool
	data      bool
	cause     error
	at        time.Time
}

// recorder keeps what a handler or an answerer saw, in order.
type recorder struct {
	mu   sync.Mutex
	list []seen
}

func (r *recorder) add(m *stage.Msg, cause error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, seen{
		turn: m.Subject.Turn, seq: m.Meta.Seq, delivered: m.Delivered, attempt: m.Attempt, last: m.Last,
		data: m.Data != nil, cause: cause, at: time.Now(),
	})
}

func (r *recorder) all() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]seen(nil), r.list...)
}

func (r *recorder) len() int { return len(r.all()) }

// wait waits for n records and returns them.
func (r *recorder) wait(t *testing.T, what string, n int) []seen {
	t.Helper()
	testenv.WaitFor(t, bound, what, func() bool { return r.len() >= n })
	return r.all()
}

// handler records every delivery, then returns what fn says.
func (r *recorder) handler(fn func(m *stage.Msg) error) stage.Handler {
	return func(_ context.Context, m *stage.Msg) error {
		r.add(m, nil)
		return fn(m)
	}
}

// answerer records every answer, then returns what fn says (nil fn: nil).
func (r *recorder) answerer(fn func(m *stage.Msg) error) stage.Answerer {
	return func(_ context.Context, m *stage.Msg, cause error) error {
		r.add(m, cause)
		if fn == nil {
			return nil
		}
		return fn(m)
	}
}

// stays checks over quiet that r gets no record past n.
func (r *recorder) stays(t *testing.T, what string, n int) {
	t.Helper()
	time.Sleep(quiet)
	if got := r.len(); got != n {
		t.Errorf("%s: %d, want %d", what, got, n)
	}
}
