//go:build unix

package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stopping timings; variables so that tests can shorten them.
var (
	// stdioTerminate is how long a stdio server has to exit after its stdin
	// is closed before its process group is sent SIGTERM, and as long again
	// before SIGKILL.
	stdioTerminate = 2 * time.Second
	// groupPoll is how often a stopping group is checked for survivors.
	groupPoll = 20 * time.Millisecond
)

// stdioTransport runs a stdio server in a process group of its own and
// talks to it over its stdin and stdout.
//
// It replaces the SDK's CommandTransport, which signals only the process it
// started: a server started through a launcher (npx, uvx, a shell script)
// is that process's child, and many servers do not exit when their stdin
// closes, so they would outlive toolwire. Here the whole group is stopped
// when the session closes and as soon as the process toolwire started exits.
type stdioTransport struct {
	cmd    *exec.Cmd
	stderr io.Writer
}

// Connect starts the server.
func (t *stdioTransport) Connect(ctx context.Context) (mcpsdk.Connection, error) {
	g, err := startGroup(t.cmd, t.stderr)
	if err != nil {
		return nil, err
	}
	// The session ends by closing the server's stdin (the writer), which
	// stops the group; closing our end of its stdout first could kill a
	// server that is still writing with SIGPIPE, so the group closes it.
	return (&mcpsdk.IOTransport{Reader: io.NopCloser(g.stdout), Writer: g}).Connect(ctx)
}

// procGroup is a started server's process group; it is led by the process
// toolwire started, and its id is that process's pid. It is the Writer of
// the server's session: Write writes to the server's stdin, Close stops
// every process of the group.
type procGroup struct {
	cmd    *exec.Cmd
	pgid   int
	stdin  *os.File // our end of the server's stdin
	stdout *os.File // our end of its stdout
	stderr *os.File // our end of its stderr

	exited  chan struct{} // closed when the leader has been reaped; waitErr is then set
	waitErr error
	copied  chan struct{} // closed when stderr is drained: no process holds it any more

	stopOnce  sync.Once
	closeOnce sync.Once
	closeErr  error
}

// startGroup starts cmd as the leader of a new process group, with pipes
// of our own for its standard streams: with an io.Writer as stderr, exec
// would copy in goroutines that Wait waits for, and a grandchild holding
// stderr would keep Wait (and so the news of the leader's exit) waiting.
func startGroup(cmd *exec.Cmd, stderr io.Writer) (*procGroup, error) {
	var (
		opened []*os.File
		err    error
	)
	pipe := func() (r, w *os.File) {
		if err == nil {
			if r, w, err = os.Pipe(); err == nil {
				opened = append(opened, r, w)
			}
		}
		return r, w
	}
	inR, inW := pipe()
	outR, outW := pipe()
	errR, errW := pipe()
	if err != nil {
		closeFiles(opened)
		return nil, fmt.Errorf("mcp: pipes for a stdio server: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	// A group of its own: a terminal's Ctrl-C reaches toolwire only, which
	// then stops the server itself, and the whole group can be signalled.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err = cmd.Start(); err != nil {
		closeFiles(opened)
		return nil, err
	}
	// The server's processes hold their own copies of their ends.
	closeFiles([]*os.File{inR, outW, errW})
	g := &procGroup{
		cmd: cmd, pgid: cmd.Process.Pid,
		stdin: inW, stdout: outR, stderr: errR,
		exited: make(chan struct{}), copied: make(chan struct{}),
	}
	go func() {
		defer close(g.copied)
		_, _ = io.Copy(stderr, g.stderr)
	}()
	go func() {
		g.waitErr = g.cmd.Wait()
		close(g.exited)
		// The server is over when its leader is: what it left behind
		// would otherwise run on unsupervised, holding its pipes.
		g.stop()
	}()
	return g, nil
}

// Write writes to the server's stdin.
func (g *procGroup) Write(p []byte) (int, error) { return g.stdin.Write(p) }

// Close stops the server, as the MCP specification asks of a client: it
// closes the server's stdin and waits stdioTerminate for the leader to
// exit, then stops the group (stop). It returns the leader's exit status.
// It is safe to call more than once and concurrently.
func (g *procGroup) Close() error {
	g.closeOnce.Do(func() {
		g.stdin.Close()
		within(g.exited, stdioTerminate)
		g.stop()
		if within(g.exited, stdioTerminate) {
			g.closeErr = g.waitErr
		} else {
			g.closeErr = fmt.Errorf("mcp: server process %d did not exit after SIGKILL", g.pgid)
		}
		// The rest of stderr explains the exit; a process that left the
		// group may hold it open, and must not hold Close.
		within(g.copied, stdioTerminate)
		g.stderr.Close()
		g.stdout.Close()
	})
	return g.closeErr
}

// within waits up to d for ch to be closed and reports whether it was.
func within(ch <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// stop ends every process left in the group: SIGTERM, then SIGKILL to
// those still there after stdioTerminate. It returns once none is left,
// or right after SIGKILL. It runs once; later calls wait for that one.
//
// The group's id stays reserved while any member lives, even after its
// leader has been reaped, so signalling it reaches only the server's own
// processes; a member that left the group (setsid) is out of reach.
//
// A zombie still counts as a member until it is reaped, and an orphan's
// reaper may never reap (in a container, init may be toolwire itself), so
// an empty group is not the only sign of the end: once the leader has been
// reaped and no process holds the server's stderr, what is left is dead or
// has shed its standard streams, and gets SIGKILL without more waiting.
func (g *procGroup) stop() {
	g.stopOnce.Do(func() {
		if !g.signal(syscall.SIGTERM) {
			return
		}
		tick := time.NewTicker(groupPoll)
		defer tick.Stop()
		deadline := time.Now().Add(stdioTerminate)
		for time.Now().Before(deadline) {
			<-tick.C
			if !g.signal(0) {
				return
			}
			if isClosed(g.exited) && isClosed(g.copied) {
				break
			}
		}
		g.signal(syscall.SIGKILL)
	})
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// signal sends sig to the group (0: only checks); it reports whether any
// process of the group is left.
func (g *procGroup) signal(sig syscall.Signal) bool {
	return !errors.Is(syscall.Kill(-g.pgid, sig), syscall.ESRCH)
}
