package proctest

import (
	"os"
	"strconv"
	"strings"
)

// stat is the process state, parent and process group of pid, read from
// /proc/<pid>/stat.
func stat(pid int) (state byte, ppid, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	// The command name, in parentheses, may hold spaces: the fields
	// that follow start after its last ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 3 {
		return 0, 0, 0, false
	}
	ppid, _ = strconv.Atoi(f[1])
	pgid, _ = strconv.Atoi(f[2])
	return f[0][0], ppid, pgid, true
}

// scan calls keep for every live (not zombie) process and returns the pids
// it keeps.
func scan(keep func(pid, ppid, pgid int) bool) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, ppid, pgid, ok := stat(pid); ok && state != 'Z' && state != 'X' && keep(pid, ppid, pgid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// GroupLeaders are the children of this process that lead a process group
// of their own (Linux only; nil elsewhere).
func GroupLeaders() []int {
	self := os.Getpid()
	return scan(func(pid, ppid, pgid int) bool { return ppid == self && pgid == pid })
}

// Group lists the live processes of process group pgid (Linux only; nil
// elsewhere).
func Group(pgid int) []int {
	return scan(func(_, _, g int) bool { return g == pgid })
}

// Children lists the live children of this process (Linux only; nil
// elsewhere). A subreaper's children include the orphans of its
// descendants.
func Children() []int {
	self := os.Getpid()
	return scan(func(_, ppid, _ int) bool { return ppid == self })
}
