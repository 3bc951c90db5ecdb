package main

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestProcFigures(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	// Burn a little CPU so that this process has used some.
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	if cpu := cpuTime(os.Getpid()); cpu <= 0 {
		t.Errorf("cpuTime = %s, want more than 0", cpu)
	}
	if cpuTime(0) <= 0 {
		t.Error("cpuTime(0) (this process) is 0")
	}
	if cpuTime(-1) != 0 {
		t.Error("the CPU time of no process is not 0")
	}
}
