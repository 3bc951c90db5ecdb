package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/proctest"
	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

// workerDeathEnv has a re-run of this test binary play a part in
// TestBashDiesWithWorker: "harness,backend,delay,dir" watches a worker,
// "worker,backend,delay,dir" is one.
const workerDeathEnv = "TOOLWIRE_TEST_WORKER_DEATH"

// waitForCommand is the delay of the control worker: it does not die, it
// waits for its command, which then writes.
const waitForCommand = "wait"

// cancelPrefix marks a delay after which the worker cancels its command
// rather than dying.
const cancelPrefix = "cancel:"

// deathReport is what the harness prints: how the worker ended, and what
// it left running.
type deathReport struct {
	Worker string   `json:"worker"` // its wait status
	Killed bool     `json:"killed"` // by SIGKILL
	Left   []string `json:"left"`   // processes left behind, "pid: command line"
	Err    string   `json:"err,omitempty"`
}

// runWorkerDeath is the re-runs' part.
func runWorkerDeath(arg string) int {
	role, rest, _ := strings.Cut(arg, ",")
	switch role {
	case "harness":
		return runDeathHarness(rest)
	case "worker":
		return runDyingWorker(rest)
	}
	fmt.Fprintf(os.Stderr, "%s: unknown role %q\n", workerDeathEnv, role)
	return 2
}

// runDeathHarness makes itself the reaper of every orphan below it, runs a
// worker, and prints what the worker left running ten seconds after its
// end, killing it: the worker's command, or a piece of its sandbox
// stranded half set up.
func runDeathHarness(arg string) int {
	var rep deathReport
	defer func() { _ = json.NewEncoder(os.Stdout).Encode(rep) }()
	if err := proctest.Subreaper(); err != nil {
		rep.Err = "subreaper: " + err.Error()
		return 0
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerDeathEnv+"=worker,"+arg)
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		rep.Err = "the worker did not start: " + err.Error()
		return 0
	}
	rep.Worker = cmd.ProcessState.String()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	rep.Killed = ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
	// The command would have written a second after its start. What is
	// still there after a generous bound more (a loaded machine is slow to
	// tear a sandbox down) was left behind.
	time.Sleep(2 * time.Second)
	for end := time.Now().Add(8 * time.Second); len(proctest.Children()) > 0 && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
		reapChildren()
	}
	rep.Left = killLeft()
	return 0
}

// killLeft kills and reaps every child of this process (a subreaper's
// include its descendants' orphans) and lists those it found, "pid:
// command line".
func killLeft() []string {
	var found []string
	for round := 0; round < 50; round++ {
		reapChildren()
		left := proctest.Children()
		if len(left) == 0 {
			break
		}
		for _, pid := range left {
			if round == 0 {
				cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				found = append(found, fmt.Sprintf("%d: %s", pid, strings.ReplaceAll(string(cmdline), "\x00", " ")))
			}
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
	reapChildren()
	return found
}

// holdOn is shell text with which a command tries to outlive its call: it
// takes every pipe it can open of its init and of the init's parent (the
// worker, when no namespace hides it), its lifeline among them where
// nothing keeps it out, and holds them open. Read and write, as a pipe
// opened for writing alone waits for a reader.
const holdOn = `read -r _ _ _ worker _ < /proc/$PPID/stat
n=20
for f in /proc/$PPID/fd/* /proc/$worker/fd/*; do
  case $(readlink "$f") in pipe:*) eval "exec $n<>$f" && n=$((n+1)) ;; esac
done 2>/dev/null
`

// reapChildren collects every child of this process that has ended.
func reapChildren() {
	for {
		if pid, _ := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); pid <= 0 {
			return
		}
	}
}

// runDyingWorker starts, as the Bash tool does, a command that would write
// dir/wrote a second later from a session of its own, after trying to hold
// its lifeline open (holdOn), lets delay pass and kills itself. A delay of 0
// lands the death while the command's sandbox is still starting: before
// its init's runtime has a handler for any signal, or while bubblewrap
// sets up. The delay "wait" waits for the command instead.
func runDyingWorker(arg string) int {
	parts := strings.SplitN(arg, ",", 3)
	if len(parts) != 3 {
		fmt.Fprintf(os.Stderr, "%s: want backend,delay,dir, got %q\n", workerDeathEnv, arg)
		return 2
	}
	var delay time.Duration
	cancelling := strings.HasPrefix(parts[1], cancelPrefix)
	parts[1] = strings.TrimPrefix(parts[1], cancelPrefix)
	if parts[1] != waitForCommand {
		var err error
		if delay, err = time.ParseDuration(parts[1]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	shell, err := findShell()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := bashRunner{contain: sandbox.Policy{Sandbox: sandbox.Backend(parts[0])}.Containment}
	cmd, err := r.command(ctx, shell, holdOn+"( setsid sh -c 'sleep 1; touch "+filepath.Join(parts[2], "wrote")+"' & ); sleep 3", parts[2], "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	runtime.LockOSThread()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if parts[1] == waitForCommand {
		if err := cmd.Wait(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	time.Sleep(delay)
	if cancelling {
		// A cancel, as a lost claim or a turn's cancel gives: the call
		// ends, the worker lives on.
		cancel()
		_ = cmd.Wait()
		return 0
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// TestBashDiesWithWorker: a worker killed by SIGKILL leaves nothing of its
// command running, however soon after the command's start it dies. The
// agent is told "outcome unknown" for such a call, so a write after the
// worker's death would be a side effect nobody accounts for. The death
// right at the start is the one that once slipped through: a contained
// command's init, PID 1 of its namespace, drops a SIGTERM that lands
// before its runtime has a handler for it; and a SIGTERM that lands while
// bubblewrap sets up leaves bubblewrap's child waiting forever. A worker
// that does not die shows that the command does write when let.
func TestBashDiesWithWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs the test binary as a worker, many times")
	}
	if raceEnabled {
		// The workers are other processes, out of the detector's sight,
		// and each under it takes the longer to start.
		t.Skip("runs in the plain test run")
	}
	backends := []sandbox.Backend{sandbox.BackendLandlock, sandbox.BackendBwrap, sandbox.BackendNone}
	for _, b := range backends {
		t.Run(string(b), func(t *testing.T) {
			if c := (sandbox.Policy{Sandbox: b}).Containment(); c.Backend != b {
				t.Skip(c.Status)
			}
			// At once, many times over, then later: all at the same time,
			// which loads the machine as the worst moments do.
			// Half a second in, the command has taken what it could.
			delays := []string{waitForCommand, "100µs", "1ms", "5ms", "50ms", "500ms", cancelPrefix + "500ms"}
			for range 12 {
				delays = append(delays, "0s")
			}
			// A cancel is the same race for the worker that lives on.
			for _, d := range []string{"0s", "0s", "0s", "0s", "0s", "0s", "100µs", "1ms", "5ms", "50ms"} {
				delays = append(delays, cancelPrefix+d)
			}
			var wg sync.WaitGroup
			for _, delay := range delays {
				wg.Go(func() { checkWorkerDeath(t, b, delay) })
			}
			wg.Wait()
		})
	}
}

// checkWorkerDeath runs one worker under a harness and checks what it left.
func checkWorkerDeath(t *testing.T, b sandbox.Backend, delay string) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerDeathEnv+"=harness,"+string(b)+","+delay+","+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var rep deathReport
	if err != nil || json.Unmarshal(out, &rep) != nil || rep.Err != "" {
		t.Errorf("delay %s: the harness failed: %v %s\n%s%s", delay, err, rep.Err, out, stderr.String())
		return
	}
	_, statErr := os.Stat(filepath.Join(dir, "wrote"))
	if delay == waitForCommand {
		if rep.Worker != "exit status 0" || statErr != nil || len(rep.Left) > 0 {
			t.Errorf("the worker that waited: %s, left %q; its command did not write (%v)\n%s", rep.Worker, rep.Left, statErr, stderr.String())
		}
		return
	}
	what := "killed " + delay
	if after, ok := strings.CutPrefix(delay, cancelPrefix); ok {
		what = "cancelled " + after
		if rep.Worker != "exit status 0" {
			t.Errorf("%s: the worker ended %s\n%s", what, rep.Worker, stderr.String())
		}
	} else if !rep.Killed {
		t.Errorf("delay %s: the worker did not die by SIGKILL: %s\n%s", delay, rep.Worker, stderr.String())
	}
	if len(rep.Left) > 0 {
		t.Errorf("%s after its start, the command left running: %q", what, rep.Left)
	}
	if statErr == nil {
		t.Errorf("%s after its start, the command ran on: it wrote", what)
	}
}

// TestBashCannotHoldTheLifeline: a command can neither inherit its init's
// lifeline nor open it through /proc, for it would then keep its init
// alive past the worker's death by holding a write end of the pipe.
func TestBashCannotHoldTheLifeline(t *testing.T) {
	eachBackend(t, func(t *testing.T, p sandbox.Policy) {
		res := bashUnder(t, p, t.TempDir(), `ls -l /proc/$$/fd/
for pid in 1 $PPID; do ( exec 9>/proc/$pid/fd/3 ) 2>/dev/null && echo "held $pid"; done; true`)
		if res.IsError {
			t.Fatalf("the command failed: %s", res.Content)
		}
		// The pipes this process keeps from its children (the lifeline
		// among them), as against those it inherited and passes on.
		ours := closeOnExecPipes(t)
		for line := range strings.Lines(res.Content) {
			f := strings.Fields(line)
			switch {
			case len(f) == 2 && f[0] == "held":
				t.Errorf("the command opened the lifeline of process %s for writing", f[1])
			case len(f) >= 3 && f[len(f)-2] == "->" && ours[f[len(f)-1]] && f[len(f)-3] != "1" && f[len(f)-3] != "2":
				t.Errorf("the shell has a pipe of the worker's: %s", strings.TrimSpace(line))
			}
		}
	})
}

// closeOnExecPipes are the pipes this process has open close-on-exec, by
// their link text in /proc ("pipe:[N]").
func closeOnExecPipes(t *testing.T) map[string]bool {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	pipes := map[string]bool{}
	for _, e := range entries {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || !strings.HasPrefix(target, "pipe:") {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(info)) {
			if v, ok := strings.CutPrefix(line, "flags:"); ok {
				if flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64); err == nil && flags&syscall.O_CLOEXEC != 0 {
					pipes[target] = true
				}
			}
		}
	}
	return pipes
}

// TestBashLeavesNoDescriptor: a command's lifeline is let go however the
// call ends (an exit, a timeout, a cancel), so a long-lived worker does not
// run out of descriptors.
func TestBashLeavesNoDescriptor(t *testing.T) {
	eachBackend(t, func(t *testing.T, p sandbox.Policy) {
		r := bashRunner{maxCapture: 1 << 10, contain: p.Containment}
		run := func() {
			dir := t.TempDir()
			_, _ = r.run(context.Background(), "true", dir, "", time.Minute)
			_, _ = r.run(context.Background(), "sleep 5", dir, "", 50*time.Millisecond)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			_, _ = r.run(ctx, "sleep 5", dir, "", time.Minute)
			cancel()
		}
		run() // what the first calls open once (the runtime's poller) is not counted
		before := openDescriptors(t)
		for range 10 {
			run()
		}
		if after := openDescriptors(t); after > before {
			t.Errorf("open descriptors: %d before 30 calls, %d after", before, after)
		}
	})
}

// openDescriptors counts this process's open descriptors.
func openDescriptors(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	return len(entries)
}
