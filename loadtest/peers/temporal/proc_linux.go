package main

import "syscall"

// childAttr makes the kernel kill the server if this process dies without
// stopping it (killed, or a panic), so that no dev server outlives a run.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
