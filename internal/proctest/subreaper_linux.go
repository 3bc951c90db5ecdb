package proctest

import "syscall"

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

// Subreaper makes this process the reaper of its orphaned descendants, so
// that Gone can reap a dead grandchild whose parent died first: where the
// init process does not reap (as in some containers), its zombie would
// answer kill(pid, 0) forever. Call it from TestMain.
func Subreaper() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return errno
	}
	return nil
}
