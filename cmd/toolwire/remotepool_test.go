package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/builtin"
)

// toolStream is an Anthropic stream of the given calls (name, JSON args).
func toolStream(calls ...[2]string) string {
	blocks := make([]testenv.ToolBlock, len(calls))
	for i, c := range calls {
		blocks[i] = testenv.ToolBlock{ID: fmt.Sprintf("toolu_t_%d", i), Name: c[0], Args: c[1]}
	}
	return testenv.AnthropicStream("msg_t", blocks...)
}

// TestRemotePoolExample: the example remote-pool program, a separate
// process, serves its own tool to `toolwire run`; once it stops, the router
// answers calls for the tool at once with "no worker".
func TestRemotePoolExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example program")
	}
	bin := filepath.Join(t.TempDir(), "remotepool")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/remotepool").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv, err := embedded.Start(embedded.Options{StoreDir: t.TempDir(), Listen: fmt.Sprintf("127.0.0.1:%d", freePort(t))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, builtin.Tools()...)})

	cmd := exec.Command(bin, "-nats", srv.ClientURL())
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	js, _ := jetstream.New(testenv.Conn(t, srv, "ads"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		if kv, err := js.KeyValue(ctx, subjects.Default().ToolsBucket()); err == nil {
			if keys, err := kv.Keys(ctx); err == nil && slicesHasPrefix(keys, "examples.WordCount.") {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatal("the example never advertised WordCount")
		}
		time.Sleep(100 * time.Millisecond)
	}

	f := filepath.Join(t.TempDir(), "wc.sse")
	stream := toolStream([2]string{"WordCount", `{"text":"one two three\nfour"}`}, [2]string{"Bash", `{"command":"echo local"}`})
	if err := os.WriteFile(f, []byte(stream), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "run", "--nats", srv.ClientURL(), "--format", "anthropic", "--stream", f)
	if err != nil {
		t.Fatal(err)
	}
	o := parseLines(t, out)
	want := fmt.Sprintf("4 words, 2 lines, 18 characters (counted by pid %d", cmd.Process.Pid)
	if len(o.results) != 2 || !strings.HasPrefix(o.results[0].Content, want) || strings.TrimSpace(o.results[1].Content) != "local" {
		t.Fatalf("results:\n%s\nwant the first to start with %q", out, want)
	}

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the example did not stop")
	}
	// Its withdrawal is what the router hears: wait until it is stored.
	for {
		kv, err := js.KeyValue(ctx, subjects.Default().ToolsBucket())
		if err != nil {
			t.Fatal(err)
		}
		if keys, err := kv.Keys(ctx); errors.Is(err, jetstream.ErrNoKeysFound) || err == nil && !slicesHasPrefix(keys, "examples.WordCount.") {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the stopped example's advertisement was never withdrawn")
		}
		time.Sleep(50 * time.Millisecond)
	}
	start := time.Now()
	out, err = runCLI(t, "run", "--nats", srv.ClientURL(), "--format", "anthropic", "--stream", f)
	if err != nil {
		t.Fatal(err)
	}
	o = parseLines(t, out)
	if !strings.Contains(o.results[0].Content, "No worker for tool WordCount") {
		t.Fatalf("after the pool stopped: %q", o.results[0].Content)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("the answer took %v", el)
	}
}

func slicesHasPrefix(keys []string, prefix string) bool {
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}
