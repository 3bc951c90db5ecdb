//go:build !linux

package sandbox

import "syscall"

// Main records that the program can contain commands; outside Linux there
// is no init: commands get the environment, limits and process group only.
func Main() {}

func landlockABI() int { return 0 }

// nsMode is unused outside Linux: there are no PID namespaces.
type nsMode struct{}

func (nsMode) attr() *syscall.SysProcAttr { return nil }

func pidNamespace() (*nsMode, string) { return nil, "there are no PID namespaces outside Linux" }
