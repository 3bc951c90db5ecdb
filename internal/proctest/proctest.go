//go:build unix

// Package proctest helps tests check that no process a program started
// outlives it: a launcher script that starts a server the way npx does, the
// pids it records, and a wait for a pid to be gone.
package proctest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// launcher runs its command as a child and waits for it, as npx runs a
// package's server: the child shares the script's stdin, stdout and stderr,
// and its process group. The script itself does not read stdin, so neither
// exits when stdin closes unless the child does. A background job's stdin
// is /dev/null unless redirected, hence the copy on fd 3.
const launcher = `#!/bin/sh
# launcher PIDFILE COMMAND [ARG...]
pidfile=$1
shift
if [ -n "$LAUNCHER_SIDECAR" ]; then
	# A helper beside the server that holds stdout and outlives it.
	sleep 600 &
	echo "$!" >>"$pidfile"
fi
exec 3<&0
"$@" <&3 3<&- &
child=$!
exec 3<&-
echo "$child" >>"$pidfile"
wait "$child"
`

// Launcher writes the launcher script into a temporary directory of t and
// returns its path. Run it as
//
//	sh LAUNCHER PIDFILE COMMAND [ARG...]
//
// It starts COMMAND as its child, appends the child's pid to PIDFILE and
// waits for it, exiting with its status. With LAUNCHER_SIDECAR set in its
// environment it first starts `sleep 600` as a second child and appends its
// pid before the command's.
func Launcher(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "launcher.sh")
	if err := os.WriteFile(path, []byte(launcher), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// Pids waits up to within for the file to hold at least n pids, one a line,
// and returns them. Every pid it returns is SIGKILLed at the test's end, so
// that a failing test leaves nothing running.
func Pids(t testing.TB, path string, n int, within time.Duration) []int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		pids, err := read(path)
		if err == nil && len(pids) >= n {
			t.Cleanup(func() {
				for _, pid := range pids {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					_ = Gone(pid, time.Second)
				}
			})
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: want %d pids after %s, have %v (%v)", path, n, within, pids, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func read(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return pids, fmt.Errorf("%s: %q is not a pid", path, f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// ErrAlive is returned by Gone for a process that is still there.
var ErrAlive = errors.New("proctest: the process is still alive")

// Gone waits up to within for the process pid to be gone: kill(pid, 0)
// reports ESRCH. It reaps pid if it is a zombie of this process (see
// Subreaper), since a zombie still answers kill; so pid must not be a
// child an exec.Cmd of this process waits for.
func Gone(pid int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		err := syscall.Kill(pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return nil
		}
		if err != nil && !errors.Is(err, syscall.EPERM) {
			return fmt.Errorf("proctest: kill(%d, 0): %w", pid, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: pid %d after %s", ErrAlive, pid, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
