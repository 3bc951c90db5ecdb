//go:build unix && !linux

package proctest

// GroupLeaders are the children of this process that lead a process group
// of their own (Linux only; nil elsewhere).
func GroupLeaders() []int { return nil }

// Group lists the live processes of process group pgid (Linux only; nil
// elsewhere).
func Group(pgid int) []int { return nil }

// Children lists the live children of this process (Linux only; nil
// elsewhere).
func Children() []int { return nil }
