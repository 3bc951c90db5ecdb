package main

import (
	"io"
	"strings"
	"testing"

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
	for _, bad := range []string{
		"--concurrency 2 --rate 10",
		"--calls-per-turn 0",
		"--calls-per-turn 5-2",
		"--safe-share 2",
		"--store disk",
		"--workflow-pollers 1",
		"--dynamic-config nokey",
		"extra",
	} {
		if _, _, _, err := parseFlags(strings.Fields(bad), io.Discard); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
