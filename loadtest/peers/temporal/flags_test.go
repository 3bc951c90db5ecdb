package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/loadtest"
)

func rangeOf(lo, hi int) loadtest.Range { return loadtest.Range{Min: lo, Max: hi} }

func TestParseFlags(t *testing.T) {
	c, path, _, err := parseFlags(strings.Fields("--concurrency 16 --calls-per-turn 10 --duration 20s --json r.json"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Concurrency != 16 || c.CallsPerTurn != rangeOf(10, 10) || c.Duration.Seconds() != 20 || path != "r.json" {
		t.Errorf("parsed %+v, json %q", c, path)
	}
	if c.Tuning != TuningTuned || c.SafeShare != 1 {
		t.Errorf("defaults: tuning %q, safe share %g; want tuned, 1", c.Tuning, c.SafeShare)
	}
}

func TestTuning(t *testing.T) {
	base := Config{Duration: time.Second, Server: ServerConfig{DynamicConfig: []string{"a=1"}}}
	tuned, err := base.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	dc := tuned.Server.DynamicConfig
	if tuned.Worker.WorkflowPollers != tunedPollers || len(dc) != len(tunedDynamicConfig)+1 || dc[len(dc)-1] != "a=1" {
		t.Errorf("tuned: pollers %d, dynamic config %v", tuned.Worker.WorkflowPollers, dc)
	}
	if len(base.Server.DynamicConfig) != 1 {
		t.Errorf("tuning changed the caller's dynamic config: %v", base.Server.DynamicConfig)
	}
	base.Tuning, base.Worker.ActivityPollers = TuningStock, 3
	stock, err := base.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if stock.Worker.WorkflowPollers != 0 || stock.Worker.ActivityPollers != 3 || len(stock.Server.DynamicConfig) != 1 {
		t.Errorf("stock: %+v", stock.Worker)
	}
	for _, bad := range []string{
		"--concurrency 2 --rate 10",
		"--calls-per-turn 0",
		"--calls-per-turn 5-2",
		"--safe-share 2",
		"--store disk",
		"--workflow-pollers 1",
		"--dynamic-config nokey",
		"--tuning fast",
		"extra",
	} {
		if _, _, _, err := parseFlags(strings.Fields(bad), io.Discard); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
