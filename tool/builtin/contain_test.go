package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

// The test binary contains its Bash calls as toolwire does: it re-runs
// itself as each command's init.
func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

// bashUnder runs one command with the Bash tool under policy.
func bashUnder(t *testing.T, policy sandbox.Policy, dir, command string) tool.Result {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"command": command})
	res, err := BashWith(policy).Call(context.Background(), raw, tool.TurnContext{WorkDir: dir}, nil)
	if err != nil {
		t.Fatalf("%q: %v", command, err)
	}
	return res
}

// TestBashSeesNoSecret: a secret in the serving process's environment
// reaches neither the command's environment nor its parent's.
func TestBashSeesNoSecret(t *testing.T) {
	t.Setenv("TOOLWIRE_TEST_SECRET", "hunter2-secret")
	t.Setenv("TOOLWIRE_TEST_ALLOWED", "visible")
	res := bashUnder(t, sandbox.Policy{Env: []string{"TOOLWIRE_TEST_ALLOWED"}}, t.TempDir(),
		`env; tr '\0' '\n' < /proc/$PPID/environ; echo "home=$HOME allowed=$TOOLWIRE_TEST_ALLOWED"`)
	if strings.Contains(res.Content, "hunter2") {
		t.Fatalf("the command saw the secret:\n%s", res.Content)
	}
	if !strings.Contains(res.Content, "home="+os.Getenv("HOME")+" allowed=visible") {
		t.Errorf("HOME or the allowed name is missing:\n%s", res.Content)
	}
	if sandbox.Contained() {
		// Landlock keeps the command from the serving process's /proc
		// entries (as from ptrace): its environment cannot be read there.
		res := bashUnder(t, sandbox.Policy{}, t.TempDir(), fmt.Sprintf("tr '\\0' '\\n' < /proc/%d/environ", os.Getpid()))
		if strings.Contains(res.Content, "hunter2") {
			t.Fatalf("the command read the server's /proc environ:\n%s", res.Content)
		}
	}
}

// TestBashLeavesNothingBehind: background jobs, a setsid one and a double
// fork included, are gone once the call has returned.
func TestBashLeavesNothingBehind(t *testing.T) {
	if !sandbox.Contained() {
		t.Skip("no init here: " + sandbox.Status())
	}
	dir := t.TempDir()
	res := bashUnder(t, sandbox.Policy{}, dir, `setsid sleep 300 & echo $! > a.pid
( setsid sleep 301 & echo $! > b.pid ) &
nohup sleep 302 > /dev/null 2>&1 & echo $! > c.pid
sleep 0.2; echo started`)
	if res.IsError || res.Content != "started" {
		t.Fatalf("%+v", res)
	}
	for _, f := range []string{"a.pid", "b.pid", "c.pid"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		if !eventually(t, 5*time.Second, func() bool { return !alive(pid) }) {
			t.Errorf("%s: process %d outlived its call", f, pid)
		}
	}
}

// TestBashMemoryLimit: a command past its memory limit is stopped, and the
// model is told it failed.
func TestBashMemoryLimit(t *testing.T) {
	res := bashUnder(t, sandbox.Policy{Limits: &sandbox.Limits{MemoryBytes: 256 << 20}}, t.TempDir(),
		`a=$(head -c 400000000 /dev/zero | tr '\0' x); echo "kept ${#a}"`)
	if !res.IsError || strings.Contains(res.Content, "kept 400000000") {
		t.Fatalf("a command past its limit ran on: %+v", res.Content)
	}
}

// TestBashWritesConfined: a command writes its turn's directory and /tmp,
// and nothing else.
func TestBashWritesConfined(t *testing.T) {
	if !sandbox.Contained() {
		t.Skip("writes are not confined here: " + sandbox.Status())
	}
	// Not under /tmp, which every command may write.
	dir, outside := t.TempDir(), outsideTmp(t)
	res := bashUnder(t, sandbox.Policy{}, dir, fmt.Sprintf(`echo in > inside.txt && echo ok-inside
echo out > %s/outside.txt && echo wrote-outside
echo tmp > /tmp/toolwire-sandbox-test.$$ && rm /tmp/toolwire-sandbox-test.$$ && echo ok-tmp`, outside))
	if !strings.Contains(res.Content, "ok-inside") || !strings.Contains(res.Content, "ok-tmp") {
		t.Errorf("the turn's directory or /tmp was not writable:\n%s", res.Content)
	}
	if strings.Contains(res.Content, "wrote-outside") {
		t.Errorf("the command wrote outside its root:\n%s", res.Content)
	}
	if _, err := os.Stat(filepath.Join(outside, "outside.txt")); err == nil {
		t.Error("a file was written outside the turn's root")
	}
	// A path the policy names is writable.
	res = bashUnder(t, sandbox.Policy{Writable: []string{outside}}, dir, fmt.Sprintf(`echo out > %s/allowed.txt && echo wrote`, outside))
	if !strings.Contains(res.Content, "wrote") {
		t.Errorf("a writable path of the policy: %s", res.Content)
	}
}

// TestBashNetworkOff: no TCP connection unless the policy allows it.
func TestBashNetworkOff(t *testing.T) {
	if !sandbox.Contained() || !strings.Contains(sandbox.Status(), "TCP off") {
		t.Skip("the network is not confined here: " + sandbox.Status())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	probe := fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && echo connected`, port)
	if res := bashUnder(t, sandbox.Policy{}, t.TempDir(), probe); strings.Contains(res.Content, "connected") {
		t.Errorf("a command connected with the network off: %s", res.Content)
	}
	if res := bashUnder(t, sandbox.Policy{Network: true}, t.TempDir(), probe); !strings.Contains(res.Content, "connected") {
		t.Errorf("a command could not connect with the network allowed: %s", res.Content)
	}
}

// outsideTmp is a fresh directory outside /tmp, which every command may
// write: in the home or the package's directory, whichever is not under
// /tmp (a checkout may be). It is removed at the test's end.
func outsideTmp(t *testing.T) string {
	t.Helper()
	home, _ := os.UserHomeDir()
	for _, base := range []string{home, "."} {
		abs, err := filepath.Abs(base)
		if err != nil || base == "" || abs == "/tmp" || strings.HasPrefix(abs, "/tmp/") {
			continue
		}
		d, err := os.MkdirTemp(abs, "toolwire-outside-root-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	t.Skip("no writable directory outside /tmp to try a write in")
	return ""
}

// TestBashBigOutputMemory: ten calls printing 20 MB each at once cost this
// process far less than their output: past the capture bound the output is
// read and counted, not kept.
func TestBashBigOutputMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 200 MB through pipes")
	}
	runtime.GC()
	idle := rssBytes(t)
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if r := rssBytes(t); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			res := bashUnder(t, sandbox.Policy{}, t.TempDir(), `head -c 20000000 /dev/zero | tr '\0' a`)
			if res.Cut == nil || res.Cut.Total != 20_000_000 {
				t.Errorf("cut %+v", res.Cut)
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	grew := peak.Load() - idle
	t.Logf("RSS idle %d MiB, peak %d MiB (+%d MiB) for ten 20 MB outputs", idle>>20, peak.Load()>>20, grew>>20)
	if grew > 64<<20 {
		t.Errorf("RSS grew by %d MiB, want at most 64", grew>>20)
	}
}

// rssBytes is this process's resident set size.
func rssBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
