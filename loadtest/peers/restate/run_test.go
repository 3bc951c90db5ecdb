package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestRun runs each mode for a second on a real restate-server. It needs
// the server: RESTATE_BIN, or npm to install it (over 200 MiB, once, into
// the user's cache), and skips without either.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: starts a restate-server (-short)")
	}
	bin := os.Getenv("RESTATE_BIN")
	if bin == "" {
		if _, err := exec.LookPath("npm"); err != nil {
			t.Skip("skipping: needs restate-server, from RESTATE_BIN or installed with npm, and npm is not on PATH")
		}
	}
	for _, tc := range []struct {
		mode    string
		callRun bool
	}{{ModeSideEffects, false}, {ModeInvocations, false}, {ModeInvocations, true}} {
		t.Run(fmt.Sprintf("%s/call-run=%t", tc.mode, tc.callRun), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			res, err := Run(ctx, Config{Mode: tc.mode, CallRun: tc.callRun, Concurrency: 2, CallsPerTurn: 3,
				Duration: time.Second, ServerBin: bin, Log: testWriter{t}})
			if err != nil {
				t.Fatal(err)
			}
			r := res.Report
			if r.Calls == 0 || r.Calls != 3*r.Turns || r.CallsPerS <= 0 || r.E2E.P50 <= 0 || r.Turn.P50 <= 0 {
				t.Errorf("figures: %+v", r)
			}
			if r.Failed() || r.Errors > 0 {
				t.Errorf("checks: lost %d, duplicates %d, order %d, errors %d", r.Lost, r.Duplicates, r.OrderViolations, r.Errors)
			}
			if res.ServerVersion == "" || r.RSSMiBMax <= 0 {
				t.Errorf("server %q, rss %g", res.ServerVersion, r.RSSMiBMax)
			}
		})
	}
}

// testWriter sends the run's log lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
