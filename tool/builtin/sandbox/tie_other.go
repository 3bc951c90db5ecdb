//go:build !linux

package sandbox

import (
	"os/exec"
	"syscall"
)

// dieWith does nothing where the system cannot tie a child's life to its
// parent's.
func dieWith(*exec.Cmd, syscall.Signal) {}

// pipeID is unused outside Linux: there is no init to tell.
func pipeID(int) string { return "" }
