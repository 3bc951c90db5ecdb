package lease_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// The tests live in package lease_test: internal/testenv imports the
// pipeline, which imports lease.

var space = subjects.Default()

const tenant = "acme"

// testCtx is a context bounded generously (shared 2-core machine).
func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// server starts a real embedded JetStream server with the lease bucket
// provisioned as the pipeline does it.
func server(t *testing.T) *embedded.Server {
	t.Helper()
	srv := testenv.Server(t)
	nc := testenv.Conn(t, srv, "provision")
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := provision.Streams(testCtx(t, 30*time.Second), js, space, provision.Config{}); err != nil {
		t.Fatal(err)
	}
	return srv
}

// proc is one "process": its own connection and its own Store.
type proc struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	kv    jetstream.KeyValue
	store *lease.Store
}

func newProc(t *testing.T, srv *embedded.Server, name string, ttl time.Duration) *proc {
	t.Helper()
	nc := testenv.Conn(t, srv, name)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 30*time.Second)
	st, err := lease.NewStore(ctx, js, space, ttl)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, space.LeaseBucket())
	if err != nil {
		t.Fatal(err)
	}
	return &proc{nc: nc, js: js, kv: kv, store: st}
}

func freshLease() *schemas.Lease { return schemas.NewLease(4, time.Now()) }

// addCall is a mutator appending a call tagged tag (in Tool).
func addCall(tag string) lease.Mutator {
	return func(l *schemas.Lease) error {
		l.Calls = append(l.Calls, schemas.LeaseCall{Seq: len(l.Calls), State: schemas.CallRouted, Tool: tag})
		return nil
	}
}

func tools(l *schemas.Lease) []string {
	out := make([]string, len(l.Calls))
	for i, c := range l.Calls {
		out[i] = c.Tool
	}
	return out
}

// queuedUpdates counts goroutines parked in Store.Update waiting for their
// queued operation: they have enqueued it and wait for the leader.
func queuedUpdates() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		lines := strings.SplitN(g, "\n", 3)
		waiting := strings.Contains(lines[0], "[chan receive") || strings.Contains(lines[0], "[select")
		if len(lines) >= 2 && waiting &&
			strings.Contains(lines[1], "lease.(*Store).Update(") {
			count++
		}
	}
	return count
}

// waitQueued waits until n goroutines are queued in Store.Update.
func waitQueued(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for queuedUpdates() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d updates queued after 20s", queuedUpdates(), n)
		}
		time.Sleep(time.Millisecond)
	}
}
