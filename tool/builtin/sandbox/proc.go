package sandbox

import (
	"os"
	"strconv"
	"strings"
)

// procStat reads a process's state letter and parent from its stat line
// in /proc; ok is false when the process is gone (or there is no /proc).
func procStat(pid int) (state string, ppid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	// The command name, in parentheses, may hold spaces and ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 2 {
		return "", 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	if err != nil {
		return "", 0, false
	}
	return f[0], ppid, true
}
