package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/proctest"
)

// sharedTestServer builds the MCP test server once for every test of the
// package that runs it.
func sharedTestServer(t *testing.T) string { return testServerBuild.get(t) }

// launchedServerConfig writes a configuration whose MCP server "tsrv" is
// the test server started through a launcher script, as npx starts a
// package's server; the server ignores the end of its stdin, as
// server-everything does. The launcher writes the server's pid to the
// returned file.
func launchedServerConfig(t *testing.T) (cfg, pidfile string) {
	t.Helper()
	dir := t.TempDir()
	pidfile = filepath.Join(dir, "pids")
	servers, _ := json.Marshal([]map[string]any{{
		"name": "tsrv", "command": "sh",
		"args": []string{proctest.Launcher(t), pidfile, sharedTestServer(t)},
		"env":  []string{"TESTSERVER_IGNORE_EOF=1", "TESTSERVER_WIPE_LOG=" + filepath.Join(dir, "wipe.log")},
	}})
	cfg = filepath.Join(dir, "toolwire.json")
	if err := os.WriteFile(cfg, []byte(`{"tool_search": "off", "mcp_servers": `+string(servers)+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, pidfile
}

// process is a running toolwire whose output (stdout and stderr) is read
// line by line.
type process struct {
	cmd    *exec.Cmd
	lines  chan string
	exited chan error
	output strings.Builder // every line so far, for failures
	mu     sync.Mutex
}

func startToolwire(t *testing.T, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(sharedBinary(t), args...), lines: make(chan string, 100), exited: make(chan error, 1)}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.output.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			p.lines <- sc.Text()
		}
	}()
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		r.Close()
	})
	return p
}

// waitLine waits for an output line containing want.
func (p *process) waitLine(t *testing.T, want string, within time.Duration) {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("toolwire ended its output without a line containing %q:\n%s", want, p.out())
			}
			if strings.Contains(line, want) {
				return
			}
		case <-timeout:
			t.Fatalf("no line containing %q after %s:\n%s", want, within, p.out())
		}
	}
}

// wait waits for toolwire to exit, draining its output, and returns how.
// The output is read on a goroutine of its own, which may be behind the
// exit: wait returns once it has read to the end (or after a bound, should
// something the process started hold the pipe), so that out() holds what
// the process printed last.
func (p *process) wait(t *testing.T, within time.Duration) error {
	t.Helper()
	drained := make(chan struct{})
	go func() {
		for range p.lines {
		}
		close(drained)
	}()
	select {
	case err := <-p.exited:
		select {
		case <-drained:
		case <-time.After(10 * time.Second):
		}
		return err
	case <-time.After(within):
		t.Fatalf("toolwire did not exit within %s:\n%s", within, p.out())
		return nil
	}
}

func (p *process) out() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.String()
}

// TestMCPServerGoneAfterExit: an MCP server started through a launcher,
// whose child does not exit when its stdin closes, is gone once toolwire
// has exited: after tools and run, and after SIGINT to run (which lets the
// running call finish first) and SIGTERM to serve.
func TestMCPServerGoneAfterExit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary and an MCP server")
	}
	const exitWithin = 30 * time.Second
	// started waits for the launcher to start the server; the pids are
	// killed at the test's end whatever happens.
	started := func(t *testing.T, pidfile string) []int {
		t.Helper()
		return proctest.Pids(t, pidfile, 1, exitWithin)
	}
	gone := func(t *testing.T, pids []int) {
		t.Helper()
		for _, pid := range pids {
			if err := proctest.Gone(pid, 10*time.Second); err != nil {
				t.Errorf("the MCP server outlived toolwire: %v", err)
			}
		}
	}

	t.Run("tools", func(t *testing.T) {
		cfg, pidfile := launchedServerConfig(t)
		p := startToolwire(t, "tools", "--config", cfg)
		pids := started(t, pidfile)
		p.waitLine(t, `"name": "mcp__tsrv__lookup"`, exitWithin)
		if err := p.wait(t, exitWithin); err != nil {
			t.Fatalf("tools: %v\n%s", err, p.out())
		}
		gone(t, pids)
	})

	t.Run("run", func(t *testing.T) {
		cfg, pidfile := launchedServerConfig(t)
		stream := writeTemp(t, "s.sse", toolStream([2]string{"mcp__tsrv__lookup", `{"key":"k"}`}))
		p := startToolwire(t, "run", "--config", cfg, "--format", "anthropic", "--stream", stream, "--workdir", t.TempDir())
		pids := started(t, pidfile)
		p.waitLine(t, `lookup k: found`, exitWithin)
		if err := p.wait(t, exitWithin); err != nil {
			t.Fatalf("run: %v\n%s", err, p.out())
		}
		gone(t, pids)
	})

	t.Run("run, SIGINT during a call", func(t *testing.T) {
		cfg, pidfile := launchedServerConfig(t)
		stream := writeTemp(t, "s.sse", toolStream([2]string{"mcp__tsrv__lookup", `{"key":"k","ms":1000}`}))
		p := startToolwire(t, "run", "--config", cfg, "--format", "anthropic", "--stream", stream, "--workdir", t.TempDir(), "--progress")
		pids := started(t, pidfile)
		p.waitLine(t, `looking up k`, exitWithin) // the call is running
		_ = p.cmd.Process.Signal(os.Interrupt)
		_ = p.wait(t, exitWithin) // an interrupted run fails; how is not the point
		gone(t, pids)
	})

	t.Run("serve, SIGTERM", func(t *testing.T) {
		cfg, pidfile := launchedServerConfig(t)
		p := startToolwire(t, "serve", "--config", cfg, "--listen", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--http", "", "--api", "",
			"--store", filepath.Join(t.TempDir(), "data"), "--workdir", t.TempDir())
		pids := started(t, pidfile)
		p.waitLine(t, "toolwire serving", exitWithin)
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		if err := p.wait(t, exitWithin); err != nil {
			t.Errorf("serve after SIGTERM: %v\n%s", err, p.out())
		}
		gone(t, pids)
	})
}
