//go:build !linux

package sandbox

import "os"

// infoFD is bubblewrap's info descriptor; bubblewrap runs on Linux only.
const infoFD = 3

// bwrapChild reports nothing outside Linux, where there is no bubblewrap.
type bwrapChild struct{}

func newBwrapChild() *bwrapChild            { return &bwrapChild{} }
func (*bwrapChild) watch(r *os.File, _ int) { r.Close() }
func (*bwrapChild) done()                   {}

// stopNamespace kills bubblewrap, which does not run outside Linux.
func (c *Cmd) stopNamespace() error { return c.Process.Kill() }
