package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The peak resident set of a process is its VmHWM in /proc/PID/status;
// writing "5" to /proc/PID/clear_refs makes the current RSS the peak, so a
// peak read after a reset is the peak since the reset. This is how
// toolwire's synth measures its own process (loadtest/rss.go); here the
// process is the Temporal server's. Linux only: elsewhere the figures are
// 0.

// resetPeakRSS makes pid's peak RSS its current one; false when refused
// (not Linux, or not allowed), and the peak read later is then the peak
// since the process started.
func resetPeakRSS(pid int) bool {
	return os.WriteFile(procPath(pid, "clear_refs"), []byte("5"), 0) == nil
}

// peakRSSMiB is pid's peak resident set (VmHWM) in MiB; 0 where
// /proc/PID/status does not say.
func peakRSSMiB(pid int) float64 {
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
