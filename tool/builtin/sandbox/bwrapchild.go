package sandbox

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// infoFD is the descriptor bubblewrap reports its child on, for a command
// without an init of this program's: the first of the command's extra
// files.
const infoFD = 3

// reportWait bounds how long a cancel waits for bubblewrap to report its
// child. It reports at once after making it; one that does not (it failed
// first, or it hangs) is killed itself.
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
// milliseconds of a command, a lost claim or a turn's cancel, wrote in
// about 1 call of 30).
type bwrapChild struct {
	known chan struct{} // closed once the report is read, or cannot be

	mu     sync.Mutex
	p      *os.Process // the child, by a pidfd; nil when none was reported
	waited bool        // the command was waited for: a child reported later is killed at once
}

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
		// The report is one JSON object, decoded as soon as it is whole:
		// the child holds the descriptor open a moment longer.
		if err := json.NewDecoder(io.LimitReader(r, 1<<16)).Decode(&info); err != nil || info.ChildPID <= 0 {
			return
		}
		p, err := os.FindProcess(info.ChildPID)
		if err != nil {
			return
		}
		// The process found is bubblewrap's child only if bubblewrap is
		// its parent: a child that has already ended may have had its
		// PID reused. Found by a pidfd, it stays the one checked.
		if _, ppid, ok := procStat(info.ChildPID); !ok || ppid != bwrapPID {
			_ = p.Release()
			return
		}
		ch.mu.Lock()
		defer ch.mu.Unlock()
		if ch.waited {
			_ = p.Kill()
			_ = p.Release()
			return
		}
		ch.p = p
	}()
}

// kill kills the child, once reported (waiting up to wait); false when
// none was reported in time, or the signal was refused (a bwrap installed
// setuid may leave its child out of the program's reach).
func (ch *bwrapChild) kill(wait time.Duration) bool {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ch.known:
	case <-t.C:
		return false
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.p == nil {
		return false
	}
	err := ch.p.Kill()
	return err == nil || errors.Is(err, os.ErrProcessDone)
}

// done is called once bubblewrap has been waited for. Its child has
// normally ended before it; one that has not was stranded (bubblewrap
// killed while it set up) and is killed now.
func (ch *bwrapChild) done() {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.waited = true
	if ch.p != nil {
		_ = ch.p.Kill()
		_ = ch.p.Release()
		ch.p = nil
	}
}
