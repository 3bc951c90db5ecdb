package sandbox

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// systemWritable are the directories every command may write: scratch
// space, and the shared memory of POSIX semaphores and queues.
var systemWritable = []string{"/tmp", "/dev/shm"}

// systemDevices are the devices every command may write: those shells and
// common programs open. Not the rest of /dev: a process of the server's
// uid could write the kernel log (/dev/kmsg), the disks of a root server,
// or another session's terminal.
var systemDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// Main makes this program able to contain commands. Call it first thing in
// main (and in TestMain): when the process was started as a command's init
// it runs the command and exits with its status; otherwise it returns at
// once.
func Main() {
	raw, ok := os.LookupEnv(specEnv)
	if !ok {
		registered.Store(true)
		return
	}
	os.Unsetenv(specEnv)
	line := os.Getenv(lifelineEnv)
	os.Unsetenv(lifelineEnv)
	var s spec
	if err := json.Unmarshal([]byte(raw), &s); err != nil || len(s.Args) == 0 && !s.Probe {
		fmt.Fprintf(os.Stderr, "toolwire sandbox: bad instructions: %v\n", err)
		os.Exit(126)
	}
	os.Exit(runInit(s, line))
}

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// runInit is the init: it readies the namespaces it is PID 1 of (where it
// has them), becomes the reaper of everything the command leaves, confines
// itself (and so the command), runs the command, then kills whatever is
// left and returns the command's status. In a PID namespace the kernel
// also kills whatever is left when the init exits.
func runInit(s spec, line string) int {
	// First of all, while it is the only process of its namespace: what
	// /proc shows from here on is that namespace.
	if s.PIDNamespace {
		if err := enterNamespace(); err != nil {
			fmt.Fprintf(os.Stderr, "toolwire sandbox: %v\n", err)
			return 126
		}
	}
	if s.Probe {
		return 0
	}
	// Not dumpable: a process of the same user (the command, where no
	// Landlock domain or namespace of its own keeps it out) cannot open
	// this one's /proc entries, and so cannot take a write end of its
	// lifeline from /proc/<pid>/fd and keep it alive past the program.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "toolwire sandbox: dumpable: %v\n", err)
		return 126
	}
	// Orphans of the command become this process's children instead of
	// PID 1's, so that the cleanup below finds every one of them, setsid
	// or not.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "toolwire sandbox: subreaper: %v\n", err)
		return 126
	}
	// The end of the call or of the program, told by the lifeline: clean
	// up, then go. Watched before the command starts, so that nothing the
	// command does can outlive either unnoticed.
	cut := make(chan struct{})
	if line == "" || pipeID(lifelineFD) != line {
		fmt.Fprintf(os.Stderr, "toolwire sandbox: %v\n", errNoLifeline)
		return 126
	}
	// Kept from the command before it starts, not by the watcher whenever
	// it runs; and never waited on by a read (see lifelineCut).
	syscall.CloseOnExec(lifelineFD)
	if err := unix.SetNonblock(lifelineFD, true); err != nil {
		fmt.Fprintf(os.Stderr, "toolwire sandbox: the lifeline: %v\n", err)
		return 126
	}
	go watchLifeline(cut)
	// SIGTERM (the program's, besides the lifeline, or an operator's):
	// clean up, then go. So too the signals a command could send its init
	// where it reaches it, SIGQUIT among them: its default would print the
	// init's goroutines into the call's output.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	cmd := exec.Command(s.Args[0], s.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	// A session of its own: the command has no controlling terminal, so
	// /dev/tty (writable under Landlock) is not the server's terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true}
	waited, err := startConfined(s, cmd)
	if errors.Is(err, errCallEnded) {
		return 126 // said by the call's own end: nobody reads this output
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "toolwire sandbox: %v\n", err)
		return 126
	}
	var werr error
	select {
	case werr = <-waited:
	case sig := <-term:
		killTree()
		<-waited
		if sig == syscall.SIGQUIT {
			sig = syscall.SIGTERM // the runtime's default for SIGQUIT dumps its goroutines
		}
		return dieOf(sig.(syscall.Signal))
	case <-cut:
		killTree()
		<-waited
		return dieOf(syscall.SIGKILL)
	}
	killTree()
	if werr == nil {
		return 0
	}
	if ee, ok := werr.(*exec.ExitError); ok {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			// End the way the command ended, so that the executor reads
			// the signal and not an exit code.
			return dieOf(st.Signal())
		}
		return ee.ExitCode()
	}
	return 126
}

// watchLifeline closes cut once the program that started this init has
// let the command's lifeline (lifelineFD) go, or is gone: the lifeline
// then hangs up.
func watchLifeline(cut chan<- struct{}) {
	for logged := false; ; {
		gone, err := lifelineCut(-1)
		if gone {
			close(cut)
			return
		}
		if err == nil {
			continue
		}
		// Not a reason to kill the command: the next poll may work, and
		// the program still stops the init with a signal when it has
		// waited long enough.
		if !logged {
			fmt.Fprintf(os.Stderr, "toolwire sandbox: watching the program's lifeline: %v\n", err)
			logged = true
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lifelineCut reports whether the lifeline has hung up, waiting up to
// timeout milliseconds (-1: until it does). A missing lifeline counts as
// cut, with errNoLifeline.
func lifelineCut(timeout int) (bool, error) {
	fds := []unix.PollFd{{Fd: lifelineFD, Events: unix.POLLIN}}
	n, err := unix.Poll(fds, timeout)
	switch {
	case err == unix.EINTR:
		return false, nil
	case err != nil:
		return false, err
	case n == 0:
		return false, nil
	case fds[0].Revents&unix.POLLNVAL != 0:
		return true, errNoLifeline // closed since: the init's own doing
	case fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0:
		return true, nil
	}
	// Readable and not hung up: something was written, which the program
	// never does (a command that opened the pipe through /proc, where
	// nothing kept it out). Drained, without waiting (the descriptor is
	// non-blocking), so that the next poll waits.
	var buf [64]byte
	_, _ = unix.Read(lifelineFD, buf[:])
	return false, nil
}

// dieOf ends this process by sig, as the command ended; the status is the
// shell's convention for it should the signal not be delivered. PID 1 of a
// namespace cannot die of a signal it sends itself (the kernel drops it),
// so there the convention is all it can say, as under bubblewrap.
func dieOf(sig syscall.Signal) int {
	if os.Getpid() == 1 {
		return 128 + int(sig)
	}
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig)
	time.Sleep(time.Second) // the signal is delivered asynchronously
	return 128 + int(sig)
}

// errNoLifeline is the refusal to start a command whose init was told of
// a lifeline it does not have.
var errNoLifeline = fmt.Errorf("no lifeline on descriptor %d: start the command with sandbox.Cmd's Start", lifelineFD)

// errCallEnded is the refusal to start a command whose lifeline was cut
// while its init started.
var errCallEnded = errors.New("the command's call ended before it started")

// startConfined starts cmd from a thread of its own that Landlock confines
// and that drops every capability first, and returns where its Wait will
// report. Only that thread and what
// it starts are confined: the init's other threads stay outside the
// command's domain, so that they may signal it (Landlock scopes signals to
// a domain, and confining every thread would give each a domain of its
// own). The thread starts the command, waits for it (its parent-death
// signal is tied to the thread) and then ends with its goroutine, never
// running anything else.
func startConfined(s spec, cmd *exec.Cmd) (<-chan error, error) {
	started := make(chan error, 1)
	waited := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		// Landlock first: its rules open the allowed paths, which a
		// thread without capabilities might not be let into.
		if err := confineThread(s); err != nil {
			started <- err
			return
		}
		if s.Landlock || s.PIDNamespace {
			if err := dropCapabilities(); err != nil {
				started <- err
				return
			}
		}
		// The call may have ended, or the program died, while this init
		// started: the command is then not started at all, rather than
		// started and killed a moment later.
		if gone, err := lifelineCut(0); gone {
			started <- cmp.Or(err, errCallEnded)
			return
		}
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("Failed to start %s: %w", s.Args[0], err)
			return
		}
		started <- nil
		waited <- cmd.Wait()
	}()
	return waited, <-started
}

// confineThread applies Landlock to the calling thread: read anything,
// write only the command's directory, the policy's paths, /tmp, /dev/shm
// and a few devices,
// no TCP unless the policy allows it, and signals and abstract sockets
// only within the command. A spec without Landlock (another backend, or
// none: the program refuses that in strict mode before it starts the
// init) leaves it unconfined.
func confineThread(s spec) error {
	if !s.Landlock || landlockABI() <= 0 {
		return nil
	}
	var writable []string
	for _, p := range append(s.Writable, systemWritable...) {
		if _, err := os.Stat(p); err == nil {
			writable = append(writable, p)
		}
	}
	rules := []landlock.Rule{landlock.RODirs("/"), landlock.RWDirs(writable...).IgnoreIfMissing(),
		landlock.RWFiles(systemDevices...).IgnoreIfMissing()}
	cfg := landlock.V7.BestEffort()
	if s.Network {
		cfg.HandledAccessNet = 0 // TCP as the host allows it
	}
	fd, flags, err := cfg.NewRulesetFD(rules...) // no net rule: no TCP bind or connect
	if err != nil || fd < 0 {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

// killTree kills every descendant of this process and reaps them, until
// none is left: a process that forks while it is being killed is caught by
// the next round (and, as an orphan, is this process's child).
func killTree() {
	self := os.Getpid()
	for round := 0; round < 50; round++ {
		pids := descendants(self)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		reap()
		if len(pids) == 0 {
			return
		}
		time.Sleep(time.Duration(round+1) * time.Millisecond)
	}
}

// reap collects the exit status of every child that has ended.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
