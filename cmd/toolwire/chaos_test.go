package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestChaosShort is `toolwire loadtest chaos` for 15 s with 1,000
// malformed events: a three-node JetStream cluster of serve processes, a
// router, three executors and two reorders as processes; an executor
// killed with SIGKILL every 5 s, and the router, a NATS node and a reorder
// once each. It checks the JSON report's exact shape and its figures: no
// call lost, duplicated or out of order, no side effect twice, every turn
// complete, every malformed event dead-lettered, every process alive. The
// recovery bounds are twice the command's (this test shares a small
// machine with the others); the command's own run is the measurement.
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a three-node cluster and six stage processes for a minute")
	}
	bin := sharedBinary(t)
	out := filepath.Join(t.TempDir(), "chaos.json")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "loadtest", "chaos", "--duration", "15s", "--malformed", "1000", "--quiet",
		"--max-recovery", "4s", "--max-node-recovery", "20s", "--json", out, "--dir", t.TempDir())
	text, err := cmd.CombinedOutput()
	t.Logf("%s", text)
	if err != nil {
		t.Fatalf("loadtest chaos: %v", err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]json.RawMessage
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(rep))
	for k := range rep {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"calls", "dead_letters", "duplicates", "good_turns_incomplete", "kills", "lost", "malformed_sent",
		"node_recovery_ms", "order_violations", "outcome_unknown", "recovery_ms", "rss_mib_max", "side_effects_twice", "turns"}
	if !slices.Equal(keys, want) {
		t.Fatalf("report keys %v, want %v", keys, want)
	}
	var r struct {
		Calls, Turns, Kills, Lost, Duplicates int
		OrderViolations                       int                             `json:"order_violations"`
		SideEffectsTwice                      int                             `json:"side_effects_twice"`
		MalformedSent                         int                             `json:"malformed_sent"`
		DeadLetters                           int                             `json:"dead_letters"`
		GoodTurnsIncomplete                   int                             `json:"good_turns_incomplete"`
		RecoveryMS                            struct{ P50, P99, Max float64 } `json:"recovery_ms"`
		NodeRecoveryMS                        float64                         `json:"node_recovery_ms"`
		RSS                                   map[string]float64              `json:"rss_mib_max"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Calls == 0 || r.Turns == 0 || r.Kills < 5 {
		t.Errorf("calls %d, turns %d, kills %d: the run did not run", r.Calls, r.Turns, r.Kills)
	}
	if r.Lost+r.Duplicates+r.OrderViolations+r.SideEffectsTwice+r.GoodTurnsIncomplete != 0 {
		t.Errorf("lost %d, duplicates %d, out of order %d, side effects twice %d, incomplete turns %d",
			r.Lost, r.Duplicates, r.OrderViolations, r.SideEffectsTwice, r.GoodTurnsIncomplete)
	}
	if r.MalformedSent != 1000 || r.DeadLetters != r.MalformedSent {
		t.Errorf("malformed sent %d, dead-lettered %d", r.MalformedSent, r.DeadLetters)
	}
	if len(r.RSS) != 9 {
		t.Errorf("RSS of %d processes, want 9: %v", len(r.RSS), r.RSS)
	}
}
