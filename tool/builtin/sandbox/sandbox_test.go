package sandbox_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

func shell(t *testing.T) string {
	t.Helper()
	sh, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not on PATH")
	}
	return sh
}

// TestStatusAndExit: the init passes the command's exit status on, and its
// death by a signal as that signal — or, as PID 1 of a namespace of its
// own (Landlock's, where the host has one), which cannot die of its own
// signal, as the shell's 128+n.
func TestStatusAndExit(t *testing.T) {
	ctx := context.Background()
	for _, b := range []sandbox.Backend{sandbox.BackendNone, sandbox.BackendLandlock} {
		t.Run(string(b), func(t *testing.T) {
			p := sandbox.Policy{Sandbox: b} // the init, with Landlock or without
			cmd, err := p.Command(ctx, shell(t), "exit 7", t.TempDir(), nil)
			if err != nil || !cmd.UnderInit {
				t.Fatalf("Command: %+v, %v", cmd, err)
			}
			var ee *exec.ExitError
			if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 7 {
				t.Errorf("exit 7: %v", err)
			}
			cmd, _ = p.Command(ctx, shell(t), "kill -KILL $$", t.TempDir(), nil)
			start := time.Now()
			err = cmd.Run()
			if !errors.As(err, &ee) {
				t.Fatalf("kill: %v", err)
			}
			st := ee.Sys().(syscall.WaitStatus)
			if p.Containment().Processes {
				if st.Signaled() || st.ExitStatus() != 128+int(syscall.SIGKILL) {
					t.Errorf("a command killed by SIGKILL in a PID namespace: status %v", st)
				}
				// The status above shows the init took the PID 1 path
				// (it did not kill itself); this only catches a hang, with
				// room for a loaded machine.
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("the init took %v to end", d)
				}
			} else if !st.Signaled() || st.Signal() != syscall.SIGKILL {
				t.Errorf("a command killed by SIGKILL: status %v", st)
			}
		})
	}
	c := sandbox.Policy{}.Containment()
	if s := sandbox.Status(); s != c.Status || (c.Backend == sandbox.BackendLandlock) != strings.Contains(s, "Landlock ABI") ||
		(c.Backend == sandbox.BackendBwrap) != strings.HasPrefix(s, "contained with bubblewrap (") || sandbox.Contained() != c.Confined() {
		t.Errorf("status %q, containment %+v", s, c)
	}
}

// TestEnvironment: only the base names, the policy's and the extra pairs.
func TestEnvironment(t *testing.T) {
	t.Setenv("SANDBOX_TEST_SECRET", "nope")
	t.Setenv("SANDBOX_TEST_OK", "yes")
	cmd, err := sandbox.Policy{Env: []string{"SANDBOX_TEST_OK"}}.Command(context.Background(), shell(t), "env", t.TempDir(), []string{"EXTRA=1"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, _, _ := strings.Cut(line, "=")
		switch name {
		case "PATH", "HOME", "LANG", "TERM", "SANDBOX_TEST_OK", "EXTRA", "PWD", "SHLVL", "_", "OLDPWD":
		default:
			t.Errorf("the command got %s", line)
		}
	}
	if !strings.Contains(string(out), "SANDBOX_TEST_OK=yes") || !strings.Contains(string(out), "EXTRA=1") {
		t.Errorf("missing names:\n%s", out)
	}
}

// TestBwrap: under bubblewrap the command's status comes back (a death by
// a signal as the shell's 128+n), and its environment is the policy's.
func TestBwrap(t *testing.T) {
	p := sandbox.Policy{Sandbox: sandbox.BackendBwrap}
	if c := p.Containment(); c.Backend != sandbox.BackendBwrap {
		t.Skip(c.Status)
	}
	t.Setenv("SANDBOX_TEST_SECRET", "nope")
	ctx := context.Background()
	cmd, err := p.Command(ctx, shell(t), `env; exit 7`, t.TempDir(), []string{"EXTRA=1"})
	if err != nil || !cmd.UnderInit {
		t.Fatalf("Command: %+v, %v", cmd, err)
	}
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Errorf("exit 7: %v", err)
	}
	if strings.Contains(string(out), "nope") || !strings.Contains(string(out), "EXTRA=1") {
		t.Errorf("environment:\n%s", out)
	}
	cmd, _ = p.Command(ctx, shell(t), "kill -KILL $$", t.TempDir(), nil)
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGKILL) {
		t.Errorf("a command killed by SIGKILL: %v", err)
	}
}

// TestBwrapBroken: a bubblewrap that cannot create its namespaces (as
// where user namespaces are off) is not used, and the status says why.
func TestBwrapBroken(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "bwrap")
	script := "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not on PATH")
	}
	p := sandbox.Policy{Sandbox: sandbox.BackendBwrap, Bwrap: fake, Strict: true}
	c := p.Containment()
	want := "bash.sandbox is bwrap, but bubblewrap (" + fake + ") does not work here: bwrap: No permissions to create new namespace"
	if c.Backend != sandbox.BackendNone || c.Confined() || !strings.Contains(c.Status, want) {
		t.Errorf("containment %+v", c)
	}
	if _, err := p.Command(context.Background(), shell(t), "true", t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("strict: %v", err)
	}
}

// TestStartedWithoutLifeline: an init started around sandbox.Cmd's Start
// (by the embedded exec.Cmd's) has no lifeline, and refuses to run the
// command, saying why, rather than run it with nothing to stop it.
func TestStartedWithoutLifeline(t *testing.T) {
	p := sandbox.Policy{Sandbox: sandbox.BackendNone}
	dir := t.TempDir()
	cmd, err := p.Command(context.Background(), shell(t), "touch ran", dir, nil)
	if err != nil || !cmd.UnderInit {
		t.Fatalf("Command: %+v, %v", cmd, err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 126 || !strings.Contains(stderr.String(), "no lifeline on descriptor 3") {
		t.Errorf("started without its lifeline: %v, %q", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command ran")
	}
}
