package sandbox

import (
	"os/exec"
	"syscall"
)

// dieWith has the kernel send cmd sig when the thread that starts it ends
// (with the program, unless the caller ends the thread first).
func dieWith(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
}
