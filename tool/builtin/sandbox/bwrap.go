package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// findBwrap is the bubblewrap program to use (configured, else bwrap on
// PATH) if it works here, else "" and why not.
func findBwrap(configured string) (path, why string) {
	path = configured
	if path == "" {
		p, err := exec.LookPath("bwrap")
		if err != nil {
			return "", "bubblewrap (bwrap) is not installed"
		}
		path = p
	} else if _, err := os.Stat(path); err != nil {
		return "", fmt.Sprintf("bubblewrap is not at %s (bash.bwrap)", path)
	}
	if why := probeBwrap(path); why != "" {
		return "", why
	}
	return path, ""
}

// probeBwrap runs a trivial program under bwrap with the namespaces a
// command gets, and says why that failed ("" when it did not): bwrap is
// often installed where it cannot work, without user namespaces for an
// unprivileged user, or inside a container that forbids mounts.
func probeBwrap(path string) string {
	prog, err := exec.LookPath("true")
	if err != nil {
		prog, err = exec.LookPath("sh")
	}
	if err != nil {
		return "no program to try bubblewrap with (neither true nor sh is on PATH)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	args := append(bwrapArgs(bwrapMounts{}, "/", false), "--", prog)
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = []string{}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Sprintf("bubblewrap (%s) does not work here: %s", path, msg)
	}
	return ""
}

// bwrapMounts are the paths a command may write under bubblewrap.
type bwrapMounts struct {
	writable []string // existing, absolute, symlinks resolved
}

// writableMounts resolves the paths a command may write: its directory,
// the policy's, and /tmp (the real one, as under Landlock: a private one
// would hide what a command leaves there for the next call). A path that
// does not exist is left out, as Landlock leaves it out.
func writableMounts(paths []string) bwrapMounts {
	var m bwrapMounts
	for _, p := range append([]string{"/tmp"}, paths...) {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			m.writable = append(m.writable, real)
		}
	}
	return m
}

// bwrapArgs are bubblewrap's options for a command run in dir: everything
// readable and nothing writable but m's paths and a /dev of its own; a
// PID namespace (the command sees only its own processes in a /proc of
// its own, and when its shell ends bwrap's init does too and the kernel
// kills every process left in the namespace); IPC and UTS namespaces; a
// network namespace with only a loopback of its own unless network is
// allowed; no capability (bwrap run by root would keep them all, and a
// command could then remount the root writable); a session of its own (no
// TIOCSTI on a terminal); and death with the process that started it.
func bwrapArgs(m bwrapMounts, dir string, network bool) []string {
	args := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"}
	for _, w := range m.writable {
		args = append(args, "--bind", w, w)
	}
	args = append(args, "--unshare-pid", "--unshare-ipc", "--unshare-uts")
	if !network {
		args = append(args, "--unshare-net")
	}
	args = append(args, "--cap-drop", "ALL", "--die-with-parent", "--new-session")
	if dir != "" {
		args = append(args, "--chdir", dir)
	}
	return args
}

// bwrapCommand is the command that runs args under the bubblewrap at path,
// with bwrapArgs and then opts as bubblewrap's options ("--as-pid-1": args
// are PID 1 of the namespace and reap what they start). The environment is
// bwrap's own, which it passes on: env is already scrubbed, so bwrap's own
// /proc entry holds no more than the command's, and every bwrap version
// takes it (--clearenv is 0.5's).
func bwrapCommand(ctx context.Context, path string, p Policy, dir string, env, opts, args []string) *exec.Cmd {
	bw := bwrapArgs(writableMounts(append([]string{dir}, p.Writable...)), dir, p.Network)
	bw = append(append(bw, opts...), "--")
	cmd := exec.CommandContext(ctx, path)
	cmd.Args = append(append([]string{path}, bw...), args...)
	cmd.Env, cmd.Dir = env, dir
	return cmd
}
