package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/builtin"
)

// TestDrainOnSIGTERM: an executor process told to stop while two long
// calls run exits 0 within its drain deadline; the calls are handed to the
// other executor: the read-only one runs again there and gives its real
// result, the other is answered "outcome unknown" and its side effect
// never happens. No call is lost.
func TestDrainOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("starts executor processes")
	}
	bin := sharedBinary(t)
	srv, err := embedded.Start(embedded.Options{StoreDir: t.TempDir(), Listen: fmt.Sprintf("127.0.0.1:%d", freePort(t))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, builtin.Tools()...), Executors: -1})
	workdir := t.TempDir()
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "serve", "--nats", srv.ClientURL(), "--stages", "executor", "--executors", "1",
			"--drain-timeout", "1s", "--workdir", workdir)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
		return cmd
	}
	nc := testenv.Conn(t, srv, "drain-test")
	first := start()
	waitWorkers(t, nc, 1)
	cl, err := client.New(nc, client.Config{Space: subjects.Default()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cl.SubmitCalls(ctx, "reads", []client.Call{bash("toolu_r", "sleep 6 && echo read-only-done")}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cl.SubmitCalls(ctx, "writes", []client.Call{bash("toolu_w", "touch started && sleep 6 && echo side >> side")}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, time.Minute, "the writing call to start", func() bool {
		_, err := os.Stat(filepath.Join(workdir, "started"))
		return err == nil
	})
	second := start()
	waitWorkers(t, nc, 1)

	stopped := time.Now()
	if err := first.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- first.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the stopped executor exited with %v, want 0", err)
		}
		t.Logf("the stopped executor exited %v after SIGTERM (drain deadline 1s)", time.Since(stopped).Round(time.Millisecond))
	case <-time.After(15 * time.Second):
		t.Fatal("the stopped executor did not exit within 15 s of SIGTERM with a 1 s drain deadline")
	}

	reads := collectAny(t, ctx, cl, "reads")
	if r := reads[0]; r.IsError || r.Content != "read-only-done" || r.Attempt < 2 {
		t.Errorf("the read-only call: attempt %d, error %v, %q", r.Attempt, r.IsError, r.Content)
	}
	writes := collectAny(t, ctx, cl, "writes")
	if r := writes[0]; !r.IsError || !strings.Contains(r.Content, "outcome unknown") {
		t.Errorf("the writing call: error %v, %q", r.IsError, r.Content)
	}
	time.Sleep(7 * time.Second) // past when the command would have written
	if _, err := os.Stat(filepath.Join(workdir, "side")); err == nil {
		t.Error("the handed-back call's side effect happened")
	}
	_ = second
}
