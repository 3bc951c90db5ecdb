package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// nsMode is how a Landlock command's init gets a PID namespace of its own:
// directly (root with CAP_SYS_ADMIN), or inside a user namespace of its
// own (any user, where user namespaces are allowed).
type nsMode struct {
	user bool
}

// attr is how the init is started in its namespaces: a PID namespace,
// whose PID 1 it is, and a mount namespace, for a /proc of that PID
// namespace. In a user namespace the caller's ids map to themselves, and
// the init keeps CAP_SYS_ADMIN across its exec (ambient: a process that is
// not root in its namespace loses its capabilities at exec) to mount that
// /proc; the command does not keep it (dropCapabilities).
func (m nsMode) attr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS}
	if m.user {
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	}
	return a
}

// pidNamespace is how this host gives a Landlock command's init its
// namespaces, or why it cannot: it tries them with the init itself.
func pidNamespace() (*nsMode, string) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Sprintf("the program's own path: %v", err)
	}
	var modes []nsMode
	if os.Geteuid() == 0 {
		modes = append(modes, nsMode{})
	}
	var whys []string
	for _, m := range append(modes, nsMode{user: true}) {
		why := probeNamespace(self, m)
		if why == "" {
			return &m, ""
		}
		whys = append(whys, why)
	}
	return nil, strings.Join(whys, "; ")
}

// probeNamespace starts the init in m's namespaces to do no more than set
// them up, and says why that failed ("" when it did not): clone is refused
// where user namespaces are off or a container's seccomp filter forbids
// them (EPERM, EINVAL), and mounting a /proc where the container's is
// partly hidden.
func probeNamespace(self string, m nsMode) string {
	b, err := json.Marshal(spec{Probe: true, PIDNamespace: true})
	if err != nil {
		return err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self)
	cmd.Args = []string{"toolwire-sandbox"}
	cmd.Env = []string{specEnv + "=" + string(b)}
	cmd.SysProcAttr = m.attr()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	kind := "a PID namespace"
	if m.user {
		kind = "a user and PID namespace"
	}
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String()) // the init's own words
		if msg == "" {
			msg = cloneRefusal(err)
		}
		return kind + ": " + msg
	}
	return ""
}

// cloneRefusal says why the kernel refused to start a process in new
// namespaces, in the words of the settings that refuse it.
func cloneRefusal(err error) string {
	switch {
	case errors.Is(err, syscall.EPERM):
		return "not permitted (EPERM: no CAP_SYS_ADMIN, user namespaces off for unprivileged users, or a container's seccomp filter)"
	case errors.Is(err, syscall.ENOSPC):
		return "refused (ENOSPC: user.max_user_namespaces or user.max_pid_namespaces is 0 or reached, or namespaces nest too deep)"
	case errors.Is(err, syscall.EINVAL):
		return "not supported (EINVAL: a kernel without these namespaces, or a process that may not create them)"
	}
	return err.Error()
}

// enterNamespace readies the init's namespaces, whose PID 1 it is: a mount
// tree of its own (private, so that nothing mounted here reaches the host,
// nor the host's mounts here), and on /proc a proc of its PID namespace,
// where the server's processes, and so their environments, are not.
func enterNamespace() error {
	if os.Getpid() != 1 {
		return fmt.Errorf("the init is process %d, not 1, of its PID namespace", os.Getpid())
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mount tree private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	return nil
}
