//go:build !linux

package sandbox

import (
	"os/exec"
	"syscall"
)

// dieWith does nothing where the system cannot tie a child's life to its
// parent's.
func dieWith(*exec.Cmd, syscall.Signal) {}

// leadGroup does nothing outside Linux, where no command runs under
// bubblewrap.
func leadGroup(*exec.Cmd) {}

// pipeID names nothing outside Linux, where no command runs under an init.
func pipeID(int) string { return "" }
