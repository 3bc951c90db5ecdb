package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

// drainGrace is how long output is still read after the shell's process
// group has been killed. Only a process that left the group (setsid) can
// hold the pipe open longer, and the call does not wait for it.
const drainGrace = 250 * time.Millisecond

// bashRunner runs Bash commands.
type bashRunner struct {
	maxCapture int // bytes of output held in memory
	// contain is the policy's containment, worked out at the first call
	// (it tries the host's namespaces and bubblewrap, and the program
	// must have called sandbox.Main, which a tool built before main has
	// not) and kept for the others.
	contain func() sandbox.Containment
}

// stopGrace is how long a contained command's init has, once told to stop,
// to kill what the command started before it is killed itself.
const stopGrace = 2 * time.Second

// run runs command with bash -c (sh when bash is missing) in dir, contained
// by the runner's sandbox policy: a scrubbed environment, resource limits,
// and an init of its own that kills everything the command started when the
// call ends — on timeout, on cancellation, and also after a normal exit, so
// that background jobs, setsid ones included, do not outlive the call. The
// process group is killed too, for a program that cannot run the init.
//
// The command finds the call's idempotency key (key, when set) in
// TOOLWIRE_IDEMPOTENCY_KEY, for the services it calls.
//
// A timeout is an error result. A cancellation is returned as the context's
// error, with the output so far as content. Output beyond maxCapture is
// counted, not kept; the result's Cut says how much there was.
func (r bashRunner) run(ctx context.Context, command, dir, key string, timeout time.Duration) (tool.Result, error) {
	out := &cappedBuffer{max: r.maxCapture}
	res, err := r.runInto(ctx, out, command, dir, key, timeout)
	res.Cut = out.cut()
	return res, err
}

// runInto is run with the output captured in out.
func (r bashRunner) runInto(ctx context.Context, out *cappedBuffer, command, dir, key string, timeout time.Duration) (tool.Result, error) {
	shell, err := findShell()
	if err != nil {
		return tool.Result{Content: err.Error(), IsError: true}, nil
	}
	start := time.Now()
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	// The shell writes to a pipe of our own rather than to an io.Writer:
	// exec would then copy in goroutines that Wait waits for, and any
	// grandchild still holding the pipe would keep the call waiting.
	pr, pw, err := os.Pipe()
	if err != nil {
		return tool.Result{}, fmt.Errorf("bash: output pipe: %w", err)
	}
	cmd, err := r.command(runCtx, shell, command, dir, key)
	if err != nil {
		pr.Close()
		pw.Close()
		return tool.Result{Content: err.Error(), IsError: true}, nil
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	// The command's parent-death signal follows the thread that starts
	// it, not the process: that thread must outlive the command, whatever
	// else runs in the program (a goroutine that ends locked to its thread
	// ends it).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return tool.Result{Content: fmt.Sprintf("Failed to start %s: %v", shell, err), IsError: true}, nil
	}
	pw.Close() // the children hold their own copies

	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, pr)
	}()

	waitErr := cmd.Wait()
	_ = killGroup(cmd.Process.Pid)
	select {
	case <-copied:
	case <-time.After(drainGrace):
	}
	pr.Close() // unblocks the copy if an escaped process holds the pipe
	<-copied

	output := out.String()
	switch {
	case waitErr == nil:
		return commandResult(command, output, 0), nil
	case ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		return tool.Result{Content: output}, fmt.Errorf("bash: command interrupted: %w", ctx.Err())
	case runCtx.Err() != nil:
		// The call's own timeout or an earlier deadline of the caller:
		// either way the command ran out of time, and its output is
		// worth more to the model than a bare error.
		limit := timeout
		if deadline, ok := runCtx.Deadline(); ok {
			limit = deadline.Sub(start)
		}
		return tool.Result{Content: joinLines("Command timed out after "+formatSeconds(limit), output), IsError: true}, nil
	}
	var exitErr *exec.ExitError
	if !errors.As(waitErr, &exitErr) {
		return tool.Result{Content: joinLines(output, waitErr.Error()), IsError: true}, nil
	}
	if st, ok := exitErr.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		return tool.Result{Content: joinLines("Terminated by signal "+st.Signal().String(), output), IsError: true}, nil
	}
	return commandResult(command, output, exitErr.ExitCode()), nil
}

// command is the contained command that runs command in dir until ctx
// ends. It dies with the worker (kill -9, a crash: the agent is then told
// "outcome unknown", and the command must not go on writing after that),
// as the sandbox ties it to the program's life; when ctx ends, the
// sandbox's Cancel stops it and all it started, or its process group is
// killed where it has no init.
func (r bashRunner) command(ctx context.Context, shell, command, dir, key string) (*sandbox.Cmd, error) {
	var extra []string
	if key != "" {
		extra = append(extra, tool.IdempotencyEnv+"="+key)
	}
	cmd, err := r.contain().Command(ctx, shell, command, dir, extra)
	if err != nil {
		return nil, err
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true // besides the sandbox's own fields
	if !cmd.UnderInit {
		cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	}
	cmd.WaitDelay = stopGrace // then the init (or bubblewrap) is killed
	return cmd, nil
}

// commandResult turns a finished command's exit code into a result, judging
// the code by what the command means by it.
func commandResult(command, output string, code int) tool.Result {
	if code == 0 || benignExit(command, code) {
		return tool.Result{Content: output}
	}
	return tool.Result{Content: joinLines("Exit code "+strconv.Itoa(code), output), IsError: true}
}

// findShell prefers bash, as the model writes bash, and falls back to sh.
func findShell() (string, error) {
	for _, name := range []string{"bash", "sh"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no shell found: neither bash nor sh is on PATH")
}

// killGroup kills the process group led by pid. The group outlives its
// leader as long as any member lives, so this reaches grandchildren after
// the shell itself has exited.
func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// formatSeconds renders d as seconds, "120s" or "0.5s". It rounds to a
// tenth of a second below 10s and to the second above, so that a deadline
// the caller set a moment earlier than ours still reads as the timeout.
func formatSeconds(d time.Duration) string {
	unit := 100 * time.Millisecond
	if d >= 10*time.Second {
		unit = time.Second
	}
	return strconv.FormatFloat(d.Round(unit).Seconds(), 'f', -1, 64) + "s"
}
