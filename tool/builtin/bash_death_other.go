//go:build !linux

package builtin

import "syscall"

// dieWithWorker does nothing where the system cannot tie a child's life to
// its parent's.
func dieWithWorker(*syscall.SysProcAttr, bool) {}
