//go:build !linux

package sandbox

import (
	"os"
	"time"
)

// infoFD is bubblewrap's info descriptor; bubblewrap runs on Linux only.
const infoFD = 3

// reportWait is unused outside Linux.
const reportWait = 0

// bwrapChild reports nothing outside Linux, where there is no bubblewrap.
type bwrapChild struct{}

func newBwrapChild() *bwrapChild            { return &bwrapChild{} }
func (*bwrapChild) failed()                 {}
func (*bwrapChild) watch(r *os.File, _ int) { r.Close() }
func (*bwrapChild) kill(time.Duration) bool { return false }
func (*bwrapChild) done()                   {}

// stopNamespace kills bubblewrap, which does not run outside Linux.
func (c *Cmd) stopNamespace() error { return c.Process.Kill() }
