package loadtest

import (
	"os"
	"runtime"
	"testing"
)

// TestPeakRSS reads a live process's peak (this one, by pid and as 0) and
// nothing for a process that cannot exist.
func TestPeakRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	ResetPeakRSS(0)
	if rss := PeakRSSMiB(os.Getpid()); rss <= 0 {
		t.Errorf("PeakRSSMiB(own pid) = %g, want more than 0", rss)
	}
	if rss := PeakRSSMiB(0); rss <= 0 {
		t.Errorf("PeakRSSMiB(0) = %g, want more than 0", rss)
	}
	if PeakRSSMiB(-1) != 0 || ResetPeakRSS(-1) {
		t.Error("a process that cannot exist has figures")
	}
}
