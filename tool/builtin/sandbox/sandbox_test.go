package sandbox_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

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
// death by a signal as that signal.
func TestStatusAndExit(t *testing.T) {
	ctx := context.Background()
	cmd, underInit, err := sandbox.Policy{}.Command(ctx, shell(t), "exit 7", t.TempDir(), nil)
	if err != nil || !underInit {
		t.Fatalf("Command: under init %v, %v", underInit, err)
	}
	var ee *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Errorf("exit 7: %v", err)
	}
	cmd, _, _ = sandbox.Policy{}.Command(ctx, shell(t), "kill -KILL $$", t.TempDir(), nil)
	err = cmd.Run()
	if !errors.As(err, &ee) {
		t.Fatalf("kill: %v", err)
	}
	if st := ee.Sys().(syscall.WaitStatus); !st.Signaled() || st.Signal() != syscall.SIGKILL {
		t.Errorf("a command killed by SIGKILL: status %v", st)
	}
	if s := sandbox.Status(); s == "" || (sandbox.Contained() && !strings.Contains(s, "Landlock ABI")) {
		t.Errorf("status %q", s)
	}
}

// TestEnvironment: only the base names, the policy's and the extra pairs.
func TestEnvironment(t *testing.T) {
	t.Setenv("SANDBOX_TEST_SECRET", "nope")
	t.Setenv("SANDBOX_TEST_OK", "yes")
	cmd, _, err := sandbox.Policy{Env: []string{"SANDBOX_TEST_OK"}}.Command(context.Background(), shell(t), "env", t.TempDir(), []string{"EXTRA=1"})
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
