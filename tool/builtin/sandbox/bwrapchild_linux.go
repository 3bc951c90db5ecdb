package sandbox

import (
	"encoding/json"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// infoFD is the descriptor bubblewrap reports its child on, for a command
// without an init of this program's: the first of the command's extra
// files.
const infoFD = 3

// reportWait bounds how long a cancel waits for bubblewrap to report its
// child. It reports at once after making it; one that does not (it failed
// first, or it hangs) is killed with its process group, its child among
// them: the child leaves the group only once bubblewrap has reported it.
const reportWait = 2 * time.Second

// bwrapChild is the first process of a command's PID namespace under
// bubblewrap without an init of this program's: bubblewrap's own init,
// which runs the shell. A SIGKILL to it ends the namespace, and with it
// everything the command started.
//
// Killing bubblewrap instead, as exec's Cancel does, is not enough: until
// its child's own init starts, the child has no tie to bubblewrap's life,
// so bubblewrap killed while it sets up leaves its child to run the
// command with nobody to stop it (bwrap 0.8; a cancel in the first
// milliseconds of a command, a lost claim or a turn's cancel, let 18 to 30
// commands in 400 write).
type bwrapChild struct {
	known chan struct{} // closed once the report is read, or cannot be

	mu sync.Mutex
	fd int // a pidfd of the child; -1 when none was reported (or no pidfd could be had)
	// given up: the command was waited for, or the cancel stopped
	// waiting for the report. A child reported later is killed at once.
	givenUp bool
}

// newBwrapChild is the report of a bubblewrap about to start.
func newBwrapChild() *bwrapChild { return &bwrapChild{known: make(chan struct{}), fd: -1} }

// watch reads bubblewrap's report from r (its info descriptor's other
// end) in the background, and closes known. bwrapPID is bubblewrap's own
// process.
func (ch *bwrapChild) watch(r *os.File, bwrapPID int) {
	go func() {
		defer close(ch.known)
		defer r.Close()
		var info struct {
			ChildPID int `json:"child-pid"`
		}
		// Decoded as soon as the object is whole, not at end of file.
		if err := json.NewDecoder(io.LimitReader(r, 1<<16)).Decode(&info); err != nil || info.ChildPID <= 0 {
			return
		}
		// Only a pidfd names the child for good: a bare PID may be
		// another process's by the time it is signalled. Without one
		// (an old kernel, a filter), no child is known, and a cancel
		// kills bubblewrap's process group instead.
		fd, err := unix.PidfdOpen(info.ChildPID, 0)
		if err != nil {
			return
		}
		// The process found is bubblewrap's child only if bubblewrap is
		// its parent: a child that has already ended may have had its
		// PID reused. Bubblewrap is alive here but for a moment's race
		// (it reported a moment ago, and waits for its child).
		if _, ppid, ok := procStat(info.ChildPID); !ok || ppid != bwrapPID {
			unix.Close(fd)
			return
		}
		ch.mu.Lock()
		defer ch.mu.Unlock()
		if ch.givenUp {
			_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			unix.Close(fd)
			return
		}
		ch.fd = fd
	}()
}

// kill kills the child, once reported (waiting up to wait); false when
// none was reported in time, or the signal was refused. A child reported
// after the wait is killed as soon as it is.
func (ch *bwrapChild) kill(wait time.Duration) bool {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ch.known:
	case <-t.C:
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.fd < 0 {
		ch.givenUp = true
		return false
	}
	err := unix.PidfdSendSignal(ch.fd, unix.SIGKILL, nil, 0)
	return err == nil || err == unix.ESRCH
}

// done is called once bubblewrap has been waited for. Its child has
// normally ended before it; one that has not was stranded (bubblewrap
// killed from outside while it set up) and is killed now.
func (ch *bwrapChild) done() {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.givenUp = true
	if ch.fd >= 0 {
		_ = unix.PidfdSendSignal(ch.fd, unix.SIGKILL, nil, 0)
		unix.Close(ch.fd)
		ch.fd = -1
	}
}

// stopNamespace is the Cancel of a command under bubblewrap without an
// init of this program's: it kills the first process of bubblewrap's
// namespace once bubblewrap has reported it. Without a report in time, it
// kills bubblewrap's process group (Command makes bubblewrap its leader):
// bubblewrap, and its child, which leaves the group only after the report.
func (c *Cmd) stopNamespace() error {
	if c.child.kill(reportWait) {
		return nil
	}
	if err := syscall.Kill(-c.Process.Pid, syscall.SIGKILL); err == nil {
		return nil
	}
	return c.Process.Kill()
}
