package loadtest

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// resetPeakRSS makes the peak RSS the current one, so that the peak read at
// the end is the run's (Linux; elsewhere, or when refused, nothing happens).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSSMiB is the process's peak resident set (VmHWM) in MiB; 0 where
// /proc/self/status does not say.
func peakRSSMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
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
