package builtin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

// workerDeathEnv has a re-run of this test binary play a worker that dies
// by SIGKILL while its Bash command starts: "backend,delay,dir".
const workerDeathEnv = "TOOLWIRE_TEST_WORKER_DEATH"

// runDyingWorker is the re-run's part. It starts, as the Bash tool does,
// a command that would write dir/wrote a second later, lets delay pass
// and kills itself. A delay of 0 lands the death while the command's init
// is still starting: before its runtime has a handler for any signal.
func runDyingWorker(arg string) int {
	parts := strings.SplitN(arg, ",", 3)
	if len(parts) != 3 {
		fmt.Fprintf(os.Stderr, "%s: want backend,delay,dir, got %q\n", workerDeathEnv, arg)
		return 2
	}
	delay, err := time.ParseDuration(parts[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	shell, err := findShell()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	r := bashRunner{contain: sandbox.Policy{Sandbox: sandbox.Backend(parts[0])}.Containment}
	cmd, err := r.command(context.Background(), shell, "sleep 1; touch "+filepath.Join(parts[2], "wrote"), parts[2], "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	runtime.LockOSThread()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	time.Sleep(delay)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// TestBashDiesWithWorker: a worker killed by SIGKILL leaves no command
// running, however soon after the command's start it dies. The agent is
// told "outcome unknown" for such a call, so a write after the worker's
// death would be a side effect nobody accounts for. The death right at the
// start is the one that once slipped through: a contained command's init,
// PID 1 of its namespace, drops a SIGTERM that lands before its runtime
// has a handler for it.
func TestBashDiesWithWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs the test binary as a worker, many times")
	}
	backends := []sandbox.Backend{sandbox.BackendLandlock, sandbox.BackendBwrap, sandbox.BackendNone}
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			if c := (sandbox.Policy{Sandbox: b}).Containment(); c.Backend != b {
				t.Skip(c.Status)
			}
			// At once, many times over, then later: all at the same time,
			// which loads the machine as the worst moments do.
			delays := []time.Duration{100 * time.Microsecond, time.Millisecond, 5 * time.Millisecond, 50 * time.Millisecond}
			for range 12 {
				delays = append(delays, 0)
			}
			var wg sync.WaitGroup
			for _, delay := range delays {
				wg.Go(func() {
					dir := t.TempDir()
					cmd := exec.Command(os.Args[0], "-test.run=^$")
					cmd.Env = append(os.Environ(), workerDeathEnv+"="+string(b)+","+delay.String()+","+dir)
					out, err := cmd.CombinedOutput()
					if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
						t.Errorf("the worker did not die by SIGKILL: %v\n%s", err, out)
						return
					}
					// The command would have written a second after its start.
					time.Sleep(2 * time.Second)
					if _, err := os.Stat(filepath.Join(dir, "wrote")); err == nil {
						t.Errorf("killed %v after its command's start, the worker left the command running: it wrote", delay)
					}
				})
			}
			wg.Wait()
		})
	}
}
