package loadtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ResetPeakRSS makes a process's peak resident set its current one (Linux:
// "5" to /proc/PID/clear_refs; pid 0 is this process), so that the peak
// read after a run is the run's. It reports false when refused (not Linux,
// or not allowed): the peak read later then covers the process's life.
// The peers' load tests measure their servers with it.
func ResetPeakRSS(pid int) bool {
	return os.WriteFile(procPath(pid, "clear_refs"), []byte("5"), 0) == nil
}

// PeakRSSMiB is a process's peak resident set (VmHWM) in MiB (pid 0: this
// process); 0 where /proc does not say.
func PeakRSSMiB(pid int) float64 {
	b, err := os.ReadFile(procPath(pid, "status"))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if err != nil {
			return 0
		}
		return kb / 1024
	}
	return 0
}

// procPath is a file of /proc for pid; pid 0 is this process.
func procPath(pid int, name string) string {
	if pid == 0 {
		return "/proc/self/" + name
	}
	return fmt.Sprintf("/proc/%d/%s", pid, name)
}
