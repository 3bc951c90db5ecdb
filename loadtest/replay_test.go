package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool/builtin"
	"github.com/toolwire/toolwire/tool/testtools"
)

// freeAddr is a TCP address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// recordTurns records a served pipeline while a client submits turns:
// some whole, some streamed call by call, one cancelled.
func recordTurns(t *testing.T) ([]byte, RecordStats) {
	t.Helper()
	srv := testenv.ServerWith(t, embedded.Options{Listen: freeAddr(t)})
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, append(builtin.Tools(), testtools.Tools()...)...), Executors: 2})
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	const turns = 6
	var buf bytes.Buffer
	ready := make(chan struct{})
	type res struct {
		st  RecordStats
		err error
	}
	rec := make(chan res, 1)
	go func() {
		st, err := Record(ctx, RecordConfig{NATS: srv.ClientURL(), Turns: turns, Duration: 30 * time.Second, Ready: ready}, &buf)
		rec <- res{st, err}
	}()
	select {
	case <-ready:
	case r := <-rec:
		t.Fatalf("record: %+v, %v", r.st, r.err)
	}
	var wg sync.WaitGroup
	for k := range turns {
		wg.Go(func() {
			id := client.NewTurnID()
			calls := []client.Call{
				{Name: "Noop", Input: json.RawMessage(`{"n":1}`)},
				{Name: "Sleep", Input: json.RawMessage(fmt.Sprintf(`{"ms":%d,"safe":true}`, 1+k))},
				{Name: "Sleep", Input: json.RawMessage(`{"ms":1,"safe":false}`)},
			}[:1+k%3]
			var err error
			if k%2 == 0 {
				err = cl.SubmitCalls(ctx, id, calls, client.TurnOptions{MaxConcurrency: 4})
			} else {
				for i, c := range calls {
					time.Sleep(5 * time.Millisecond)
					if err = cl.SubmitCall(ctx, id, i, c, client.TurnOptions{}); err != nil {
						break
					}
				}
				if k == 3 {
					_ = cl.Cancel(ctx, id, "user")
				}
				if err == nil {
					err = cl.EndTurn(ctx, id, len(calls), "tool_use")
				}
			}
			if err != nil {
				t.Error(err)
				return
			}
			if _, _, err := testenv.ReadTurn(ctx, cl, id); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	r := <-rec
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.st.Turns != turns || r.st.Events == 0 || r.st.Bad != 0 {
		t.Fatalf("recorded %+v", r.st)
	}
	return buf.Bytes(), r.st
}

func replayOK(t *testing.T, c ReplayConfig, log []LogEvent) *ReplayReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := Replay(ctx, c, log)
	if err != nil {
		t.Fatal(err)
	}
	var sum bytes.Buffer
	_ = r.WriteSummary(&sum)
	t.Logf("%+v\n%s", c, sum.String())
	if r.Calls == 0 || r.Failed() {
		t.Fatalf("replay: %+v", *r.Report)
	}
	return r
}

func TestRecordReplay(t *testing.T) {
	b, st := recordTurns(t)
	validateLog(t, logSchema(t), b)
	log, err := ReadLog(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != st.Events {
		t.Fatalf("read %d events, recorded %d", len(log), st.Events)
	}
	uses := 0
	for _, e := range log {
		if e.Meta.Seq >= 0 {
			uses++
		}
	}
	a := replayOK(t, ReplayConfig{}, log)
	m := replayOK(t, ReplayConfig{Max: true}, log)
	s := replayOK(t, ReplayConfig{Speed: 4, Loop: 2}, log)
	if a.Calls != uses || m.Calls != a.Calls || !maps.Equal(a.Mix, m.Mix) || a.Turns != st.Turns || m.Turns != a.Turns {
		t.Errorf("replays differ: %d calls %v in %d turns, then %d calls %v in %d turns; %d tool_use recorded",
			a.Calls, a.Mix, a.Turns, m.Calls, m.Mix, m.Turns, uses)
	}
	if s.Calls != 2*a.Calls || s.Turns != 2*a.Turns {
		t.Errorf("two loops: %d calls in %d turns, want twice %d in %d", s.Calls, s.Turns, a.Calls, a.Turns)
	}
	if a.Mix["Noop"] == 0 || a.Mix["Sleep"] == 0 {
		t.Errorf("call mix %v", a.Mix)
	}
}

func TestReplayConfigErrors(t *testing.T) {
	log := sampleLog()
	for _, c := range []struct {
		cfg   ReplayConfig
		field string
	}{
		{ReplayConfig{Speed: -1}, "speed"},
		{ReplayConfig{Speed: 2, Max: true}, "max"},
		{ReplayConfig{Loop: -1}, "loop"},
	} {
		_, err := Replay(context.Background(), c.cfg, log)
		ce, ok := err.(*ConfigError)
		if !ok || ce.Field != c.field {
			t.Errorf("%+v: %v, want a ConfigError on %s", c.cfg, err, c.field)
		}
	}
	if _, err := Record(context.Background(), RecordConfig{}, nil); err == nil {
		t.Error("record without --nats")
	}
}
