package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/proctest"
)

// goneWithin bounds how long a stopped server's processes may take to
// disappear; generous, for a loaded machine.
const goneWithin = 10 * time.Second

// launched is a server started through the launcher script, the way npx
// starts a package's server: the script is the process toolwire starts,
// the server is its child.
func launched(t *testing.T, name string, command []string, env ...string) (ServerConfig, string) {
	t.Helper()
	pidfile := filepath.Join(t.TempDir(), "pids")
	args := append([]string{proctest.Launcher(t), pidfile}, command...)
	return ServerConfig{Name: name, Command: "sh", Args: args, Env: env}, pidfile
}

// launchedTestServer is the test server behind the launcher; it ignores
// the end of its stdin, as server-everything does.
func launchedTestServer(t *testing.T, env ...string) (ServerConfig, string) {
	t.Helper()
	env = append([]string{"TESTSERVER_IGNORE_EOF=1", "TESTSERVER_WIPE_LOG=" + filepath.Join(t.TempDir(), "wipe.log")}, env...)
	return launched(t, "tsrv", []string{testServer(t)}, env...)
}

func allGone(t *testing.T, what string, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if err := proctest.Gone(pid, goneWithin); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
}

// TestCloseStopsLaunchedServer: Close stops the launcher's child too,
// though it ignores the end of its stdin (and, in the second case, SIGTERM).
func TestCloseStopsLaunchedServer(t *testing.T) {
	defer setVar(&stdioTerminate, 300*time.Millisecond)()
	for _, c := range []struct {
		name string
		env  []string
	}{
		{"ignores stdin EOF", nil},
		{"ignores stdin EOF and SIGTERM", []string{"TESTSERVER_IGNORE_TERM=1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, pidfile := launchedTestServer(t, c.env...)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			s, err := Connect(ctx, cfg, testLog(t))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if res, err := call(t, lookupTool(t, s, "lookup"), `{"key":"k"}`); err != nil || res.Content != "lookup k: found" {
				t.Fatalf("call through the launcher: %+v %v", res, err)
			}
			pids := proctest.Pids(t, pidfile, 1, 5*time.Second)
			began := time.Now()
			if err := s.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			t.Logf("Close took %s", time.Since(began))
			if d := time.Since(began); d > 5*time.Second {
				t.Errorf("Close took %s", d)
			}
			allGone(t, "the launched server after Close", pids)
		})
	}
}

// TestConnectStopsLaunchedServer: a server that started but did not
// connect is stopped, its launcher's child too: when the context ends
// during the handshake and when the handshake fails.
func TestConnectStopsLaunchedServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	defer setVar(&stdioTerminate, 300*time.Millisecond)()
	for _, c := range []struct {
		name    string
		command []string
		want    string
	}{
		{"the context ends", []string{"sleep", "600"}, "deadline exceeded"},
		{"the handshake fails", []string{"sh", "-c", "echo not JSON; exec sleep 600"}, "invalid character"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, pidfile := launched(t, "x", c.command)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_, err := Connect(ctx, cfg, testLog(t))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Connect: %v, want an error saying %q", err, c.want)
			}
			allGone(t, "the launched server after a failed Connect", proctest.Pids(t, pidfile, 1, 5*time.Second))
		})
	}
}

// TestCrashStopsLaunchedGroup: when the server dies, what else its
// launcher started (a helper holding its stdout) is stopped before the
// restart, and the restarted server works.
func TestCrashStopsLaunchedGroup(t *testing.T) {
	defer setVar(&stdioTerminate, 300*time.Millisecond)()
	starts := filepath.Join(t.TempDir(), "starts")
	cfg, pidfile := launchedTestServer(t, "LAUNCHER_SIDECAR=1", "TESTSERVER_STARTS="+starts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Connect(ctx, cfg, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first := proctest.Pids(t, pidfile, 2, 5*time.Second)
	began := time.Now()
	res, err := call(t, lookupTool(t, s, "crash"), `{"ms":50}`)
	t.Logf("the crashing call was answered after %s: %q", time.Since(began), res.Content)
	if err != nil || !res.IsError || !strings.HasPrefix(res.Content, "MCP server tsrv stopped while the call was running (exit status 1") {
		t.Errorf("crash call: %+v %v", res, err)
	}
	allGone(t, "the first group after the crash", first)
	res, err = call(t, lookupTool(t, s, "lookup"), `{"key":"again"}`)
	if err != nil || res.Content != "lookup again: found" {
		t.Errorf("call after the restart: %+v %v", res, err)
	}
	second := proctest.Pids(t, pidfile, 4, 5*time.Second)[2:]
	for _, pid := range second {
		if err := proctest.Gone(pid, 0); err == nil {
			t.Errorf("pid %d of the restarted server is gone", pid)
		}
	}
	b, _ := os.ReadFile(starts)
	if n := strings.Count(string(b), "start "); n != 2 {
		t.Errorf("%d starts, want 2:\n%s", n, b)
	}
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	allGone(t, "the restarted group after Close", second)
}

// TestCloseStopsNpxServer: the real thing. server-everything, started by
// npx, does not exit when its stdin closes; after Close no process of its
// group is left. It needs npx and the npm registry, and skips without.
func TestCloseStopsNpxServer(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads and runs an MCP server with npx")
	}
	if runtime.GOOS != "linux" {
		t.Skip("lists the server's process group through /proc")
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("npx (node) is not installed")
	}
	before := proctest.GroupLeaders()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := Connect(ctx, ServerConfig{Name: "everything", Command: npx, Args: []string{"-y", "@modelcontextprotocol/server-everything"}}, testLog(t))
	if err != nil {
		t.Skipf("server-everything did not start (is the npm registry reachable?): %v", err)
	}
	defer s.Close()
	var leaders []int
	for _, pid := range proctest.GroupLeaders() {
		if !slices.Contains(before, pid) {
			leaders = append(leaders, pid)
		}
	}
	if len(leaders) != 1 {
		t.Fatalf("want one new process group, have %v", leaders)
	}
	members := proctest.Group(leaders[0])
	t.Cleanup(func() {
		for _, pid := range members {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	t.Logf("npx's process group: %v", members)
	if res, err := call(t, lookupTool(t, s, "echo"), `{"message":"hi"}`); err != nil || res.IsError || !strings.Contains(res.Content, "hi") {
		t.Errorf("echo: %+v %v", res, err)
	}
	began := time.Now()
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	t.Logf("Close took %s", time.Since(began))
	allGone(t, "npx's process group after Close", members)
}
