package sandbox

import (
	"os/exec"
	"strconv"
	"syscall"
)

// dieWith has the kernel send cmd sig when the thread that starts it ends
// (with the program, unless the caller ends the thread first).
func dieWith(cmd *exec.Cmd, sig syscall.Signal) { sysAttr(cmd).Pdeathsig = sig }

// leadGroup makes cmd the leader of a process group of its own, which its
// children share until they leave it.
func leadGroup(cmd *exec.Cmd) { sysAttr(cmd).Setpgid = true }

// sysAttr is cmd's SysProcAttr, made when it has none.
func sysAttr(cmd *exec.Cmd) *syscall.SysProcAttr {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	return cmd.SysProcAttr
}

// pipeID names the pipe fd is an end of, for the init to know its
// lifeline from any other descriptor it finds in its place ("" if fd is
// no pipe).
func pipeID(fd int) string {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return ""
	}
	return strconv.FormatUint(st.Ino, 10)
}
