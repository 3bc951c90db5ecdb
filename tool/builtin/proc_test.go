package builtin

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// procState returns the state letter and process group of pid from
// /proc, and false when the process does not exist.
func procState(pid int) (state byte, pgid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// The command name is in parentheses and may hold anything; the
	// fields after its closing parenthesis are fixed.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 3 {
		return 0, 0, false
	}
	pgid, _ = strconv.Atoi(fields[2])
	return fields[0][0], pgid, true
}

// alive reports whether pid runs: a zombie (which a container's init may
// never reap) does not count.
func alive(pid int) bool {
	state, _, ok := procState(pid)
	return ok && state != 'Z' && state != 'X'
}

// groupMembers lists the live processes of process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, g, ok := procState(pid); ok && g == pgid && state != 'Z' && state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
}

// eventually polls cond for up to d.
func eventually(t *testing.T, d time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pids parses the whitespace-separated process ids a test command printed.
func pids(t *testing.T, out string) []int {
	t.Helper()
	var ids []int
	for _, f := range strings.Fields(out) {
		id, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		t.Fatalf("no process ids in output %q", out)
	}
	return ids
}
