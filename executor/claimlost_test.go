package executor_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/builtin"
)

// TestLostClaimStopsTheCall: while a worker runs a call, the lease comes to
// show the call claimed by another worker (this one's claim lapsed while it
// could not renew it, and the call's message went elsewhere). The worker
// stops the call at once — its command is killed before it writes — and
// publishes nothing: the call is the other worker's now.
func TestLostClaimStopsTheCall(t *testing.T) {
	srv := testenv.Server(t)
	dir := t.TempDir()
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, builtin.Tools()...), WorkDir: dir})
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	turn := client.NewTurnID()
	// Watched from before the call: TW_RESULT keeps a result only until
	// reorder has taken it, so a later read would miss one.
	spy := testenv.Conn(t, srv, "spy")
	results, err := spy.SubscribeSync(subjects.Default().Result(subjects.DefaultTenant, turn, 0))
	if err == nil {
		err = spy.Flush() // the server has the subscription
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.SubmitCalls(ctx, turn, []client.Call{{Name: "Bash", Input: []byte(`{"command":"sleep 2 && touch written"}`)}}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	store := testenv.Store(t, ctx, srv)
	testenv.WaitFor(t, 10*time.Second, "the call to run", func() bool {
		l, _, err := store.Get(ctx, subjects.DefaultTenant, turn)
		return err == nil && l.Peek(0) != nil && l.Peek(0).State == schemas.CallRunning
	})
	// Another worker takes the call over, as after a redelivery.
	if _, _, err := store.Update(ctx, subjects.DefaultTenant, turn, nil, func(l *schemas.Lease) error {
		lc := l.Call(0)
		lc.Worker, lc.Deadline = "another-worker", time.Now().Add(time.Minute).UnixMilli()
		lc.Attempts++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if _, err := os.Stat(filepath.Join(dir, "written")); err == nil {
		t.Error("the call went on after its claim was taken over")
	}
	if m, err := results.NextMsg(0); err == nil {
		t.Errorf("the worker that lost the claim published a result (%d bytes)", len(m.Data))
	}
}
