package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// serverOrSkip is the Temporal CLI to test with: $TEMPORAL_CLI, or the
// cached CLIVersion; the test skips when neither is there rather than
// spend minutes installing it (`go run . --duration 1s` installs it).
func serverOrSkip(t *testing.T) ServerConfig {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	bin, err := findCLI(t.Context(), os.Getenv("TEMPORAL_CLI"), false, nil)
	if err != nil {
		t.Skipf("no Temporal CLI: %v", err)
	}
	return ServerConfig{CLI: bin, NoInstall: true}
}

// TestRun runs a short workload with unsafe calls among the safe ones
// against a real dev server: every call answered once, in order, under
// the start rule, in synth's JSON shape.
func TestRun(t *testing.T) {
	sc := serverOrSkip(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, Config{
		Concurrency: 2, Duration: 2 * time.Second, CallsPerTurn: rangeOf(1, 5), SafeShare: 0.5,
		MaxConcurrency: 2, Server: sc,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if r.Calls == 0 || r.Turns == 0 || r.Failed() || r.Errors != 0 {
		t.Fatalf("report %+v", r)
	}
	if r.E2E.P50 <= 0 || r.Turn.P50 <= 0 || r.CallsPerS <= 0 {
		t.Errorf("no figures: %+v", r)
	}
	if r.RSSMiBMax <= 0 {
		t.Logf("no server RSS (no /proc?): %+v", r)
	}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var shape map[string]any
	if err := json.Unmarshal(buf.Bytes(), &shape); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"calls", "turns", "duration_s", "calls_per_s", "e2e_ms", "overhead_ms",
		"first_result_ms", "turn_ms", "stage_msgs_per_call", "lost", "duplicates", "order_violations",
		"concurrency_violations", "rss_mib_max", "baseline"} {
		if _, ok := shape[k]; !ok {
			t.Errorf("JSON has no %q: %s", k, buf.String())
		}
	}
}

// TestServerStops checks that Stop ends the dev server process.
func TestServerStops(t *testing.T) {
	sc := serverOrSkip(t)
	s, err := StartServer(t.Context(), sc)
	if err != nil {
		t.Fatal(err)
	}
	s.Stop()
	select {
	case <-s.done:
	default:
		t.Fatal("server still running after Stop")
	}
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Errorf("server directory %s left: %v", s.dir, err)
	}
}
