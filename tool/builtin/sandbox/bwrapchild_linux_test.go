package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// reportedChild starts a process of this one's, as bubblewrap's child is
// bubblewrap's, and a report reader on a pipe: write the report with
// report, or close it unwritten.
func reportedChild(t *testing.T, parent int) (cmd *exec.Cmd, ch *bwrapChild, report func(), closeReport func()) {
	t.Helper()
	cmd = exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	ch = newBwrapChild()
	ch.watch(r, parent)
	report = func() {
		// As bubblewrap writes it: the object, then the namespace ids.
		fmt.Fprintf(w, "{\n    \"child-pid\": %d,\n    \"pid-namespace\": 4026532000\n}\n", cmd.Process.Pid)
	}
	return cmd, ch, report, func() { w.Close() }
}

// killedBySIGKILL waits up to 10 s for cmd and says whether SIGKILL ended it.
func killedBySIGKILL(t *testing.T, cmd *exec.Cmd) bool {
	t.Helper()
	ended := make(chan struct{})
	go func() { _ = cmd.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-ended
		return false
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// TestBwrapChildKilled: a cancel kills the child bubblewrap reported.
func TestBwrapChildKilled(t *testing.T) {
	cmd, ch, report, _ := reportedChild(t, os.Getpid())
	report()
	if !ch.kill(10 * time.Second) {
		t.Fatal("the reported child was not killed")
	}
	if !killedBySIGKILL(t, cmd) {
		t.Errorf("the child ended %s", cmd.ProcessState)
	}
}

// TestBwrapChildReportedLate: a cancel that gives up waiting for the
// report says so (its caller kills bubblewrap's group), and the child
// reported afterwards is killed as soon as it is.
func TestBwrapChildReportedLate(t *testing.T) {
	cmd, ch, report, _ := reportedChild(t, os.Getpid())
	if ch.kill(10 * time.Millisecond) {
		t.Fatal("a cancel before the report claimed to have killed the child")
	}
	report()
	if !killedBySIGKILL(t, cmd) {
		t.Errorf("the child reported late ended %s", cmd.ProcessState)
	}
}

// TestBwrapChildLeftAfterWait: a child still alive once bubblewrap has
// been waited for (bubblewrap killed from outside) is killed.
func TestBwrapChildLeftAfterWait(t *testing.T) {
	cmd, ch, report, _ := reportedChild(t, os.Getpid())
	report()
	<-ch.known
	ch.done()
	if !killedBySIGKILL(t, cmd) {
		t.Errorf("the child left after bubblewrap ended %s", cmd.ProcessState)
	}
}

// TestBwrapChildNotBubblewraps: a reported PID whose parent is not
// bubblewrap (its child ended, and the PID went to another process) is
// never signalled.
func TestBwrapChildNotBubblewraps(t *testing.T) {
	cmd, ch, report, _ := reportedChild(t, os.Getpid()+1<<22) // no process's PID
	report()
	if ch.kill(10 * time.Second) {
		t.Error("a process that is not bubblewrap's child was killed")
	}
	ch.done()
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the process is gone: %v", err)
	}
}

// TestBwrapChildNoReport: bubblewrap that ends without a report (it failed
// before it made a child) does not hold a cancel up.
func TestBwrapChildNoReport(t *testing.T) {
	_, ch, _, closeReport := reportedChild(t, os.Getpid())
	closeReport()
	start := time.Now()
	if ch.kill(time.Minute) {
		t.Error("a cancel without a report claimed to have killed a child")
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the cancel waited %s for a report that could not come", d)
	}
}
