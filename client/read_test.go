package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/internal/provision"
	gapreader "github.com/toolwire/toolwire/reader"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// readEnv is a server with the pipeline's streams, a reader answering gap
// reads in reads of at most three messages, and a client of tenant acme.
type readEnv struct {
	c  *Client
	js jetstream.JetStream
	sp subjects.Space
}

func startRead(t *testing.T, ctx context.Context) *readEnv {
	t.Helper()
	return startReadAfter(t, ctx, 0)
}

// startReadAfter is startRead with the reader started after delay, as
// when the client asks before the stages are up or while they restart.
func startReadAfter(t *testing.T, ctx context.Context, delay time.Duration) *readEnv {
	t.Helper()
	srv, err := embedded.Start(embedded.Options{StoreDir: t.TempDir(), MaxMemory: 64 << 20, MaxStore: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	connect := func(name string) *nats.Conn {
		nc, err := srv.Connect(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	sp := subjects.Default()
	js, err := jetstream.New(connect("stages"))
	if err != nil {
		t.Fatal(err)
	}
	if err := provision.Streams(ctx, js, sp, provision.Config{}); err != nil {
		t.Fatal(err)
	}
	rd, err := gapreader.New(connect("reader"), gapreader.Config{Space: sp, MaxMsgs: 3})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() {
		select {
		case <-time.After(delay):
		case <-rctx.Done():
		}
		ran <- rd.Run(rctx)
	}()
	t.Cleanup(func() {
		stop()
		if err := <-ran; err != nil {
			t.Errorf("reader: %v", err)
		}
	})
	c, err := New(connect("acme"), Config{Space: sp, Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	return &readEnv{c: c, js: js, sp: sp}
}

// store appends turn's results 0..n-1 and, when done, its turn_done to
// its out subject, as the reorder does, with a message of another turn
// between each two.
func (e *readEnv) store(t *testing.T, ctx context.Context, turn string, n int, done bool) {
	t.Helper()
	put := func(turn string, seq int, d schemas.Data) {
		h, body, err := schemas.Encode(schemas.Meta{Source: "/test", Tenant: "acme", Turn: turn, Seq: seq}, d)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.js.PublishMsg(ctx, &nats.Msg{Subject: e.sp.Out("acme", turn), Header: h, Data: body}); err != nil {
			t.Fatal(err)
		}
	}
	for seq := range n {
		put(turn, seq, &schemas.ToolResult{Seq: seq, ToolUseID: fmt.Sprintf("c%d", seq), Name: "Noop", Content: fmt.Sprint(seq)})
		put("other", seq, &schemas.ToolResult{Seq: seq, ToolUseID: "o", Name: "Noop", Content: "other"})
	}
	if done {
		put(turn, -1, &schemas.TurnDone{Results: n})
	}
}

// TestGapRead: a gap read asked of the reader brings a turn's messages
// after a stream sequence, in order, over as many reads as its bound
// takes, and lastMsg reads the last one by direct get; neither leaves a
// consumer on the stream.
func TestGapRead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := startRead(t, ctx)
	e.store(t, ctx, "t1", 7, true) // t1 at 1, 3, ..., 13, turn_done at 15

	last, err := e.c.lastMsg(ctx, e.sp.OutStream(), e.sp.Out("acme", "t1"))
	if err != nil || last.seq != 15 {
		t.Fatalf("last of t1: %+v, %v; want stream sequence 15", last, err)
	}
	if _, err := e.c.lastMsg(ctx, e.sp.OutStream(), e.sp.Out("acme", "none")); !errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Errorf("last of a turn with nothing stored: %v, want ErrMsgNotFound", err)
	}
	for _, tc := range []struct {
		after uint64
		want  string
	}{
		{0, "[1 3 5 7 9 11 13 15]"},
		{4, "[5 7 9 11 13 15]"},
		{13, "[15]"},
		{15, "[]"},
	} {
		var got []uint64
		err := e.c.readAfter(ctx, subjects.ReadOut, "t1", tc.after, func(m *stored) error {
			if _, _, err := schemas.Decode(m.header, m.data); err != nil {
				return err
			}
			got = append(got, m.seq)
			return nil
		})
		if err != nil || fmt.Sprint(got) != tc.want {
			t.Errorf("t1 after %d: %v, %v; want %s", tc.after, got, err, tc.want)
		}
	}
	info, err := e.js.Stream(ctx, e.sp.OutStream())
	if err != nil {
		t.Fatal(err)
	}
	if s := info.CachedInfo(); s.State.Consumers != 0 || !s.Config.AllowDirect {
		t.Errorf("out stream after the reads: %d consumers, allow direct %v; want none, true", s.State.Consumers, s.Config.AllowDirect)
	}
}

// TestResultsAfterTheFact: Results started after a turn's results were
// stored, and one started midway, get all of them through the gap read
// (the live subscription never saw them), in order, then turn_done.
func TestResultsAfterTheFact(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := startRead(t, ctx)
	e.store(t, ctx, "t1", 8, true)
	if got := collect(t, ctx, e.c, "t1"); got != "[0 1 2 3 4 5 6 7 done 8]" {
		t.Errorf("t1 read after the fact: %s", got)
	}

	// Midway: five results stored before, three and turn_done after.
	e.store(t, ctx, "t2", 5, false)
	got := make(chan string, 1)
	go func() { got <- collect(t, ctx, e.c, "t2") }()
	for seq := 5; seq < 8; seq++ {
		h, body, err := schemas.Encode(schemas.Meta{Source: "/test", Tenant: "acme", Turn: "t2", Seq: seq}, &schemas.ToolResult{Seq: seq, ToolUseID: "x", Name: "Noop"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.js.PublishMsg(ctx, &nats.Msg{Subject: e.sp.Out("acme", "t2"), Header: h, Data: body}); err != nil {
			t.Fatal(err)
		}
	}
	h, body, _ := schemas.Encode(schemas.Meta{Source: "/test", Tenant: "acme", Turn: "t2", Seq: -1}, &schemas.TurnDone{Results: 8})
	if _, err := e.js.PublishMsg(ctx, &nats.Msg{Subject: e.sp.Out("acme", "t2"), Header: h, Data: body}); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "[0 1 2 3 4 5 6 7 done 8]" {
		t.Errorf("t2 followed midway: %s", s)
	}
}

// collect reads a turn through Results into "[seq ... done n]".
func collect(t *testing.T, ctx context.Context, c *Client, turn string) string {
	var got []string
	for d, err := range c.Results(ctx, turn) {
		if err != nil {
			return fmt.Sprintf("%v after %v", err, got)
		}
		if d.Done != nil {
			got = append(got, fmt.Sprintf("done %d", d.Done.Results))
			continue
		}
		got = append(got, fmt.Sprint(d.Result.Seq))
	}
	return fmt.Sprint(got)
}

// TestGapReadCluster: on a three-member cluster, with the streams
// replicated three times, the client's direct gets and the reader's gap
// read bring a turn stored before it was followed, and no consumer is made.
func TestGapReadCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-member cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ports := make([]int, 3)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	// A member is ready only with the others: they start together. Routes
	// start only on a server that listens for clients.
	servers := make([]*embedded.Server, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range servers {
		wg.Go(func() {
			servers[i], errs[i] = embedded.Start(embedded.Options{StoreDir: t.TempDir(), Name: fmt.Sprintf("m%d", i), MaxMemory: 64 << 20, MaxStore: 256 << 20,
				Listen: "127.0.0.1:-1", ReadyTimeout: time.Minute, Cluster: &embedded.Cluster{Name: "c", Listen: fmt.Sprintf("127.0.0.1:%d", ports[i]), Routes: routes}})
		})
	}
	wg.Wait()
	for i, srv := range servers {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		t.Cleanup(srv.Shutdown)
	}
	connect := func(i int, name string) *nats.Conn {
		nc, err := servers[i].Connect(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	sp := subjects.Default()
	js, err := jetstream.New(connect(0, "stages"))
	if err != nil {
		t.Fatal(err)
	}
	// A request made before the cluster has its meta leader gets no
	// answer at all: each try has a bound of its own.
	err = jserr.Retry(ctx, time.Minute, 500*time.Millisecond, nil, func() error {
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return provision.Streams(tctx, js, sp, provision.Config{Replicas: 3})
	})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := gapreader.New(connect(1, "reader"), gapreader.Config{Space: sp, MaxMsgs: 3})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- rd.Run(rctx) }()
	defer func() { stop(); <-ran }()
	c, err := New(connect(2, "acme"), Config{Space: sp, Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	e := &readEnv{c: c, js: js, sp: sp}
	err = jserr.Retry(ctx, time.Minute, 500*time.Millisecond, nil, func() error {
		_, err := js.Publish(ctx, sp.Out("acme", "warmup"), nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	e.store(t, ctx, "t1", 8, true)
	if got := collect(t, ctx, c, "t1"); got != "[0 1 2 3 4 5 6 7 done 8]" {
		t.Errorf("t1 read after the fact on a cluster: %s", got)
	}
	s, err := js.Stream(ctx, sp.OutStream())
	if err != nil {
		t.Fatal(err)
	}
	if info := s.CachedInfo(); info.Config.Replicas != 3 || !info.Config.AllowDirect || info.State.Consumers != 0 {
		t.Errorf("out stream: %d replicas, allow direct %v, %d consumers; want 3, true, 0", info.Config.Replicas, info.Config.AllowDirect, info.State.Consumers)
	}
}

// TestApprovalsWaitForAReader: a feed started while no reader answers yet
// (the stages starting, or restarting) reads the pending requests once one
// does, rather than failing with "no responders".
func TestApprovalsWaitForAReader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e := startReadAfter(t, ctx, 700*time.Millisecond)
	stop, err := e.c.Approvals("late", func(*schemas.ApprovalRequest) {})
	if err != nil {
		t.Fatalf("approvals before the reader is up: %v", err)
	}
	stop()
}
