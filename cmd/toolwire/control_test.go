package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
	"github.com/toolwire/toolwire/tool/testtools"
)

// build is a program the package's tests build once and share.
type build struct {
	pkg, name string
	once      sync.Once
	path      string
	err       error
}

var (
	toolwireBuild   = &build{pkg: ".", name: "toolwire"}
	testServerBuild = &build{pkg: "../../tool/mcp/internal/testserver", name: "testserver"}
)

// get builds the program the first time a test asks for it.
func (b *build) get(t *testing.T) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "toolwire-"+b.name+"-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, b.name)
		out, err := exec.Command("go", "build", "-o", b.path, b.pkg).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// sharedBinary builds toolwire once for every test of the package that runs it.
func sharedBinary(t *testing.T) string { return toolwireBuild.get(t) }

// cluster is a pipeline whose executors are separate processes: router and
// reorder run in the test, two `toolwire serve --stages executor` processes
// join the test's NATS server over TCP.
type cluster struct {
	srv     *embedded.Server
	cl      *client.Client
	workdir string
	// procs are the executor processes.
	procs []*exec.Cmd
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts executor processes")
	}
	bin := sharedBinary(t)
	srv, err := embedded.Start(embedded.Options{StoreDir: t.TempDir(), Listen: fmt.Sprintf("127.0.0.1:%d", freePort(t))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	reg := testenv.Registry(t, append(builtin.Tools(), testtools.Tools()...)...)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: reg, Executors: -1, Reorders: 2})
	workdir := t.TempDir()
	var procs []*exec.Cmd
	for i := range 2 {
		cmd := exec.Command(bin, "serve", "--nats", srv.ClientURL(), "--stages", "executor", "--executors", "1", "--test-tools", "--workdir", workdir)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
		t.Cleanup(func() {
			if cmd.ProcessState != nil {
				return // killed by the test, and waited for
			}
			_ = cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				t.Errorf("executor process %d did not stop", i)
			}
		})
	}
	nc := testenv.Conn(t, srv, "control-test")
	waitWorkers(t, nc, 2)
	cl, err := client.New(nc, client.Config{Space: subjects.Default()})
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{srv: srv, cl: cl, workdir: workdir, procs: procs}
}

// waitWorkers waits until n executor processes pull from the pool's consumer.
func waitWorkers(t *testing.T, nc *nats.Conn, n int) {
	t.Helper()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sp := subjects.Default()
	for {
		if cons, err := js.Consumer(ctx, sp.ExecStream(), sp.ExecConsumer(subjects.DefaultPool)); err == nil {
			if info, err := cons.Info(ctx); err == nil && info.NumWaiting >= n {
				return
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("%d executor processes never pulled", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func bash(id, command string) client.Call {
	in, _ := json.Marshal(map[string]string{"command": command})
	return client.Call{ID: id, Name: "Bash", Input: in}
}

// collect reads a turn's results until turn_done.
func (c *cluster) collect(t *testing.T, ctx context.Context, turn string) []*schemas.ToolResult {
	t.Helper()
	return collectAny(t, ctx, c.cl, turn)
}

// collectAny reads a turn's results from cl until turn_done.
func collectAny(t *testing.T, ctx context.Context, cl *client.Client, turn string) []*schemas.ToolResult {
	t.Helper()
	var out []*schemas.ToolResult
	for d, err := range cl.Results(ctx, turn) {
		if err != nil {
			t.Fatalf("turn %s: %v", turn, err)
		}
		if d.Done != nil {
			if d.Done.Results != len(out) {
				t.Fatalf("turn_done says %d, got %d", d.Done.Results, len(out))
			}
			return out
		}
		out = append(out, d.Result)
	}
	t.Fatal("no turn_done")
	return nil
}

func wrapped(text string) string { return "<tool_use_error>" + text + "</tool_use_error>" }

// TestSiblingCancellationAcrossProcesses: a failing call of a tool that
// cancels its siblings stops the turn's other calls wherever they run.
func TestSiblingCancellationAcrossProcesses(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	t.Run("mkdir fails first: the sleeps never start", func(t *testing.T) {
		calls := []client.Call{bash("a", "mkdir /nonexistent/x"), bash("b", "sleep 5"), bash("c", "sleep 5")}
		start := time.Now()
		if err := c.cl.SubmitCalls(ctx, "sib_mkdir", calls, client.TurnOptions{}); err != nil {
			t.Fatal(err)
		}
		res := c.collect(t, ctx, "sib_mkdir")
		if !res[0].IsError || !strings.Contains(res[0].Content, "mkdir") {
			t.Fatalf("mkdir result: %+v", res[0])
		}
		want := wrapped("Cancelled: parallel tool call Bash(mkdir /nonexistent/x) errored")
		for _, r := range res[1:] {
			if r.Content != want || !r.IsError {
				t.Errorf("seq %d: %q, want %q", r.Seq, r.Content, want)
			}
		}
		if el := time.Since(start); el > 4*time.Second {
			t.Errorf("turn took %v: the sleeps ran", el)
		}
	})

	t.Run("a failing read-only call kills running sleeps", func(t *testing.T) {
		failing := "sleep 0.5; ls /nonexistent/dir/for/sure/and/more/words/here"
		calls := []client.Call{bash("a", "sleep 5"), bash("b", "sleep 5"), bash("c", failing)}
		if err := c.cl.SubmitCalls(ctx, "sib_running", calls, client.TurnOptions{}); err != nil {
			t.Fatal(err)
		}
		res := c.collect(t, ctx, "sib_running")
		if !res[2].IsError || res[2].Content == "" {
			t.Fatalf("failing call: %+v", res[2])
		}
		want := wrapped(texts.Sibling(tool.DefaultActivity("Bash", bash("", failing).Input)))
		if !strings.HasSuffix(texts.Sibling(tool.DefaultActivity("Bash", bash("", failing).Input)), "…) errored") {
			t.Fatalf("activity not cut at 40 characters: %s", want)
		}
		workers := map[string]bool{}
		for _, r := range res[:2] {
			workers[r.Worker] = true
			if r.Content != want {
				t.Errorf("seq %d: %q, want %q", r.Seq, r.Content, want)
			}
			if lag := r.FinishedAt.Sub(res[2].FinishedAt); lag > time.Second {
				t.Errorf("seq %d stopped %v after the failure", r.Seq, lag)
			}
			if r.FinishedAt.Sub(r.StartedAt) > 3*time.Second {
				t.Errorf("seq %d ran %v: it was not killed", r.Seq, r.FinishedAt.Sub(r.StartedAt))
			}
		}
		t.Logf("running sleeps were on workers %v", workers)
	})

	t.Run("grep without a match cancels nothing", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(c.workdir, "g.txt"), []byte("alpha\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		calls := []client.Call{bash("a", "grep zzz g.txt"), bash("b", "sleep 0.3 && echo done")}
		if err := c.cl.SubmitCalls(ctx, "sib_grep", calls, client.TurnOptions{}); err != nil {
			t.Fatal(err)
		}
		res := c.collect(t, ctx, "sib_grep")
		if res[0].IsError {
			t.Errorf("grep with no match is an error: %+v", res[0])
		}
		if res[1].IsError || strings.TrimSpace(res[1].Content) != "done" {
			t.Errorf("sibling: %+v", res[1])
		}
	})
}

// TestInterruptAndDiscardAcrossProcesses: turn_cancel stops the calls of
// tools that allow it and lets blocking ones finish; turn_discard stops
// everything unfinished.
func TestInterruptAndDiscardAcrossProcesses(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	t.Run("cancel", func(t *testing.T) {
		marker := filepath.Join(c.workdir, "never")
		calls := []client.Call{
			bash("a", "sleep 5"),
			{ID: "b", Name: "Sleep", Input: json.RawMessage(`{"ms":1500,"safe":true}`)},
			bash("c", "touch "+marker),
		}
		if err := c.cl.SubmitCalls(ctx, "int_cancel", calls, client.TurnOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(700 * time.Millisecond) // both safe calls are running
		sent := time.Now()
		if err := c.cl.Cancel(ctx, "int_cancel", "user pressed Esc"); err != nil {
			t.Fatal(err)
		}
		res := c.collect(t, ctx, "int_cancel")
		want := wrapped(texts.Interrupt)
		if res[0].Content != want {
			t.Errorf("Bash (interrupt: cancel): %q, want %q", res[0].Content, want)
		}
		if res[0].FinishedAt.Sub(sent) > time.Second {
			t.Errorf("Bash stopped %v after the cancel", res[0].FinishedAt.Sub(sent))
		}
		if res[1].IsError || res[1].Content != "slept 1500 ms" {
			t.Errorf("Sleep (interrupt: block) did not run to its end: %+v", res[1])
		}
		if res[2].Content != want {
			t.Errorf("queued call: %q, want %q", res[2].Content, want)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("the queued call ran")
		}
	})

	t.Run("discard", func(t *testing.T) {
		// The stream fails after three calls: no turn_end ever comes.
		calls := []client.Call{
			bash("a", "sleep 5"),
			{ID: "b", Name: "Sleep", Input: json.RawMessage(`{"ms":5000,"safe":true}`)},
			bash("c", "touch "+filepath.Join(c.workdir, "never2")),
		}
		for i, call := range calls {
			if err := c.cl.SubmitCall(ctx, "int_discard", i, call, client.TurnOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(700 * time.Millisecond)
		if err := c.cl.Discard(ctx, "int_discard", "stream failed; retrying"); err != nil {
			t.Fatal(err)
		}
		res := c.collect(t, ctx, "int_discard")
		if len(res) != 3 {
			t.Fatalf("%d results", len(res))
		}
		for _, r := range res {
			if r.Content != wrapped(texts.Discard) {
				t.Errorf("seq %d: %q", r.Seq, r.Content)
			}
		}
	})
}

// TestContextChangesInSeqOrder: the changes of a concurrent batch apply in
// seq order at the end of the batch, although the calls finish in reverse.
func TestContextChangesInSeqOrder(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dirs := make([]string, 3)
	for i := range dirs {
		dirs[i] = filepath.Join(c.workdir, fmt.Sprintf("d%d", i))
		if err := os.Mkdir(dirs[i], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	chdir := func(id, dir string, ms int) client.Call {
		in, _ := json.Marshal(map[string]any{"dir": dir, "ms": ms, "safe": true})
		return client.Call{ID: id, Name: "Chdir", Input: in}
	}
	calls := []client.Call{chdir("a", dirs[0], 900), chdir("b", dirs[1], 500), chdir("c", dirs[2], 100), bash("d", "touch seen && pwd")}
	if err := c.cl.SubmitCalls(ctx, "ctx_order", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	res := c.collect(t, ctx, "ctx_order")
	if !(res[2].FinishedAt.Before(res[1].FinishedAt) && res[1].FinishedAt.Before(res[0].FinishedAt)) {
		t.Fatalf("the batch did not finish in reverse order: %v %v %v", res[0].FinishedAt, res[1].FinishedAt, res[2].FinishedAt)
	}
	for _, r := range res[:3] {
		if r.ContextVersion != 0 || r.Batch != 0 {
			t.Errorf("batch call %d ran with context version %d in batch %d, want 0 and 0", r.Seq, r.ContextVersion, r.Batch)
		}
	}
	// The Bash call writes, so it is a batch of its own after the three.
	if got := strings.TrimSpace(res[3].Content); got != dirs[2] {
		t.Errorf("pwd after the batch = %q, want %q (the last change in seq order)", got, dirs[2])
	}
	if res[3].ContextVersion != 3 || res[3].Batch != 1 {
		t.Errorf("pwd ran with context version %d in batch %d, want 3 and 1", res[3].ContextVersion, res[3].Batch)
	}
}

// TestOversizeResultGoesToBlob: a 900 KB output (past the model's cap,
// within what Bash keeps) reaches the model as a preview; the whole of it
// is in the blob store, byte for byte.
func TestOversizeResultGoesToBlob(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var b strings.Builder
	for i := 0; b.Len() < 900_000; i++ {
		fmt.Fprintf(&b, "line %07d of a long output: the quick brown fox jumps over the lazy dog\n", i)
	}
	big := strings.TrimSuffix(b.String(), "\n")
	if err := os.WriteFile(filepath.Join(c.workdir, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.cl.SubmitCalls(ctx, "blob_turn", []client.Call{bash("a", "cat big.txt")}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	res := c.collect(t, ctx, "blob_turn")[0]
	if res.IsError || !res.Truncated || res.BlobRef == "" {
		t.Fatalf("result: error %v truncated %v blob %q", res.IsError, res.Truncated, res.BlobRef)
	}
	if len(res.Content) > 3000 || !strings.HasPrefix(res.Content, big[:1000]) || !strings.Contains(res.Content, res.BlobRef) {
		t.Errorf("preview of %d bytes: %.200q…", len(res.Content), res.Content)
	}
	blob, err := c.cl.Blob(ctx, res.BlobRef)
	if err != nil {
		t.Fatal(err)
	}
	if string(blob) != big {
		t.Fatalf("blob differs: %d bytes, want %d", len(blob), len(big))
	}
}
