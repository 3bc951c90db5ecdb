// Package sandbox contains a shell command: a scrubbed environment, resource
// limits, no process left behind when it ends (setsid and background jobs
// included), processes and a /proc of its own (so not the server's, nor
// its starting environment), no capabilities (also when the server runs as
// root), writes confined to the turn's root and a few system paths, and no
// network (no TCP under Landlock) unless allowed — with Landlock where the
// kernel offers it, with bubblewrap where it is installed, and a warning
// in Status (a refusal in strict mode) where neither is available. The
// policy's Sandbox picks the backend; Policy.Containment says which is in
// force and why.
//
// Under Landlock the containment runs in a small init process of its own:
// the program re-executes itself, so it must call Main first thing in main
// (and in TestMain). The init is PID 1 of a PID and mount namespace of its
// own (in a user namespace when not root) where the host allows one. It
// holds the command's lifeline: when the call ends or the program dies,
// however early in the command's life, the init kills the command and all
// it started. Under bubblewrap the same init runs inside the sandbox, as
// PID 1 of its namespace, for the lifeline. A program that does not call
// Main gets bubblewrap where it is installed, else the environment, the
// limits and the process group, not the rest; Status says which.
package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// specEnv carries the init's instructions from the program to its re-run.
const specEnv = "TOOLWIRE_SANDBOX_SPEC"

// BaseEnv are the variables a command keeps from the serving process: the
// rest (credentials, tokens, the server's own settings) never reach it.
var BaseEnv = []string{"PATH", "HOME", "LANG", "TERM"}

// Limits bound what one command may use; zero leaves one unlimited.
type Limits struct {
	// CPUSeconds is the CPU time of each process of the command.
	CPUSeconds uint64 `json:"cpu_seconds,omitempty"`
	// MemoryBytes is the address space of each process.
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	// OpenFiles is the number of open files of each process.
	OpenFiles uint64 `json:"open_files,omitempty"`
	// Processes is the number of processes of the user (the kernel counts
	// per user, not per command: set it with a user of its own).
	Processes uint64 `json:"processes,omitempty"`
}

// DefaultLimits are generous for a development tool and still stop a
// runaway: 10 CPU minutes, 4 GiB of address space, 4096 open files.
func DefaultLimits() Limits {
	return Limits{CPUSeconds: 600, MemoryBytes: 4 << 30, OpenFiles: 4096}
}

// Policy is what a contained command may see and do.
type Policy struct {
	// Env names variables passed through besides BaseEnv.
	Env []string `json:"env,omitempty"`
	// Limits bound the command's resources (zero value: DefaultLimits).
	Limits *Limits `json:"limits,omitempty"`
	// Writable are paths the command may write besides its directory and
	// the system's (/tmp, /dev).
	Writable []string `json:"writable,omitempty"`
	// Network lets the command use the network. Off by default, where
	// bubblewrap cuts the whole network and Landlock TCP only
	// (Containment says which).
	Network bool `json:"network,omitempty"`
	// Strict refuses to run a command that cannot be confined here: whose
	// writes are not confined, whose processes may outlive it, or that
	// sees the server's processes (and, through /proc, their starting
	// environments, secrets included).
	Strict bool `json:"strict,omitempty"`
	// Sandbox is the backend that confines writes and the network: auto
	// (the default), landlock, bwrap or none.
	Sandbox Backend `json:"sandbox,omitempty"`
	// Bwrap is the bubblewrap program (default: bwrap on PATH).
	Bwrap string `json:"bwrap,omitempty"`
}

// spec is what the init process is told.
type spec struct {
	Args     []string `json:"args"`
	Writable []string `json:"writable"`
	Network  bool     `json:"network"`
	// Landlock confines the command; without it the init only reaps.
	Landlock bool `json:"landlock"`
	// PIDNamespace says the init is PID 1 of namespaces of its own, to
	// ready before the command starts.
	PIDNamespace bool `json:"pid_namespace,omitempty"`
	// Probe has the init ready its namespaces and exit, to learn whether
	// the host allows them.
	Probe bool `json:"probe,omitempty"`
}

// registered is set by Main: this program can re-run itself as an init.
var registered atomic.Bool

// Contained reports whether commands of the default policy get the whole
// containment strict mode asks for (Containment.Confined). Like Status,
// it works the containment out anew.
func Contained() bool { return Policy{}.Containment().Confined() }

// Status says in a sentence how commands of the default policy are
// contained here, for a process's start-up log (Policy.Containment says it
// for another).
func Status() string { return Policy{}.Containment().Status }

// Command returns the command that runs script with shell in dir under p,
// as Containment.Command does. It works the containment out first, which
// costs a process or two: a caller that runs many commands under one
// policy works it out once, with Containment, and keeps it.
func (p Policy) Command(ctx context.Context, shell, script, dir string, extraEnv []string) (*Cmd, error) {
	return p.Containment().Command(ctx, shell, script, dir, extraEnv)
}

// Command returns the command that runs script with shell in dir under c's
// policy until ctx ends. extraEnv are NAME=value pairs the command also
// gets. In strict mode a policy that cannot be confined here is an error
// saying why.
//
// A command under an init of this program's is stopped when ctx ends or
// the program dies, however early in its life: the init kills everything
// the command started, escaped sessions included, and exits. It learns of
// either from the command's lifeline, a pipe whose write end the program
// closes then (the kernel, at its death), and which the command cannot
// hold open where it is contained. Outside bubblewrap the init is also
// sent SIGTERM, by Cancel and, as its parent-death signal, at the
// program's death: under the none backend nothing keeps a command from
// opening a write end of its lifeline through /proc. There, and under
// Landlock without a PID namespace, the init is within the command's
// reach (a command can stop it with SIGSTOP): the cleanup guards against
// accidents, not against a command bent on outliving its call. Cancel is
// set: a caller keeps it, and gives the command a WaitDelay after which
// the init (or bubblewrap) is killed.
//
// A command without an init of this program's (the program does not call
// Main) dies with the program by the parent-death signal alone. Under
// bubblewrap its Cancel kills the first process of bwrap's namespace, and
// so the namespace, never bwrap itself while it sets up (its child would
// be stranded, to run the command); else its process group is the
// caller's to kill.
//
// Linux sends a parent-death signal when the thread that started the
// process ends, not the process: start a command from a thread locked
// (runtime.LockOSThread) until it has been waited for.
//
// The command's SysProcAttr may be set (the death signal, the namespaces
// of a Landlock command's init): a caller sets its own fields in it rather
// than replacing it.
func (c Containment) Command(ctx context.Context, shell, script, dir string, extraEnv []string) (*Cmd, error) {
	p := c.policy
	if p.Strict && !c.Confined() {
		return nil, fmt.Errorf("the command is not run: strict sandbox mode, and Bash cannot be confined here (%s)", c.Status)
	}
	lim := DefaultLimits()
	if p.Limits != nil {
		lim = *p.Limits
	}
	// The limits are set by the shell on itself before it runs the
	// command: nothing runs unlimited for a moment, and the command cannot
	// raise them (each is hard and soft).
	args := []string{shell, "-c", ulimits(lim) + `exec "$0" -c "$1"`, shell, script}
	env := p.environ(extraEnv)
	switch {
	case c.Backend == BackendBwrap && !c.registered:
		// Bubblewrap's PID namespace does the init's work (when the shell
		// ends, so does bwrap's init, and the kernel kills what is left),
		// and its --die-with-parent ties the namespace to bwrap; the signal
		// ties bwrap to this program, all but in its first milliseconds.
		// A cancel kills the namespace's first process, which bwrap
		// reports on its info descriptor (Cmd.stopNamespace), not bwrap.
		cmd := bwrapCommand(ctx, c.bwrap, p, dir, env, []string{"--info-fd", strconv.Itoa(infoFD)}, args)
		dieWith(cmd, syscall.SIGTERM)
		leadGroup(cmd) // for stopNamespace's fallback
		out := &Cmd{Cmd: cmd, UnderInit: true, child: newBwrapChild()}
		out.Cancel = out.stopNamespace
		return out, nil
	case !c.registered:
		cmd := exec.CommandContext(ctx, shell)
		cmd.Args = args
		cmd.Env, cmd.Dir = env, dir
		dieWith(cmd, syscall.SIGKILL)
		return &Cmd{Cmd: cmd}, nil
	case c.Backend == BackendBwrap:
		// Our init runs inside bubblewrap, as PID 1 of its namespace (out
		// of the command's reach: no signal of the command's stops it),
		// for the lifeline, which bwrap lacks: its own tie to its parent's
		// life misses a death in the first tens of milliseconds. Bwrap
		// gets no signal of ours: one that kills it while it sets up
		// strands its child. Told by the lifeline, the init ends, and
		// bwrap with it.
		initCmd, initEnv, err := initArgs(spec{Args: args}, env)
		if err != nil {
			return nil, err
		}
		out := &Cmd{Cmd: bwrapCommand(ctx, c.bwrap, p, dir, initEnv, []string{"--as-pid-1"}, initCmd), UnderInit: true, hasInit: true}
		out.Cancel = func() error { return out.stop(false) }
		return out, nil
	}
	initCmd, initEnv, err := initArgs(spec{Args: args, Writable: append([]string{dir}, p.Writable...), Network: p.Network,
		Landlock: c.Backend == BackendLandlock, PIDNamespace: c.ns != nil}, env)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, initCmd[0])
	cmd.Args = []string{"toolwire-sandbox"}
	cmd.Env, cmd.Dir = initEnv, dir
	if c.ns != nil {
		cmd.SysProcAttr = c.ns.attr()
	}
	// The signal besides the lifeline: a SIGTERM that lands before the
	// init has a handler kills it (before its command starts) or, as PID
	// 1 of a namespace, is dropped, and then the lifeline tells it.
	dieWith(cmd, syscall.SIGTERM)
	out := &Cmd{Cmd: cmd, UnderInit: true, hasInit: true}
	out.Cancel = func() error { return out.stop(true) }
	return out, nil
}

// initArgs are the program and environment that run this program as the
// init of s.
func initArgs(s spec, env []string) (args, initEnv []string, err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: the program's own path: %w", err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, nil, err
	}
	return []string{self}, append(env, specEnv+"="+string(b)), nil
}

// environ is the command's environment: the allowed variables of this
// process, then extra.
func (p Policy) environ(extra []string) []string {
	allowed := append(slices.Clone(BaseEnv), p.Env...)
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(allowed, name) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// ulimits is the shell text that sets the limits, failing the command when
// one cannot be set.
func ulimits(l Limits) string {
	var b strings.Builder
	set := func(flag string, v uint64) {
		if v > 0 {
			b.WriteString("ulimit -" + flag + " " + strconv.FormatUint(v, 10) + " || exit 126; ")
		}
	}
	set("t", l.CPUSeconds)
	set("v", l.MemoryBytes/1024) // ulimit -v counts KiB
	set("n", l.OpenFiles)
	set("u", l.Processes)
	return b.String()
}
