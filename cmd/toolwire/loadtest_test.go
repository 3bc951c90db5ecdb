package main

import (
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/loadtest"
)

// loadtest synth runs a short closed loop with its baseline and writes a
// report holding every field, and its charts.
func TestLoadtestSynth(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two 2 s loads")
	}
	bin := sharedBinary(t)
	file := filepath.Join(t.TempDir(), "report.json")
	plots := filepath.Join(t.TempDir(), "charts")
	cmd := exec.Command(bin, "loadtest", "synth", "--duration", "2s", "--concurrency", "2", "--calls-per-turn", "3", "--json", file, "--baseline", "--plot", plots)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("loadtest synth: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "calls/s") || !strings.Contains(string(out), "hop p50") {
		t.Errorf("summary:\n%s", out)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, b)
	}
	for _, k := range []string{"calls", "turns", "duration_s", "calls_per_s", "e2e_ms", "overhead_ms", "first_result_ms", "turn_ms",
		"stage_msgs_per_call", "lost", "duplicates", "order_violations", "concurrency_violations", "rss_mib_max", "baseline"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("report lacks %q:\n%s", k, b)
		}
	}
	if rep["calls"].(float64) <= 0 || rep["lost"].(float64) != 0 || rep["concurrency_violations"].(float64) != 0 {
		t.Errorf("report:\n%s", b)
	}
	base := rep["baseline"].(map[string]any)
	if base["hop_ms"].(map[string]any)["p50"].(float64) <= 0 || base["inproc_calls_per_s"].(float64) <= 0 {
		t.Errorf("baseline did not run:\n%s", b)
	}
	checkCharts(t, plots, loadtest.PlotLatencyHist, loadtest.PlotLatencyTime, loadtest.PlotThroughput)
}

// checkCharts checks that each file is in dir, a PNG.
func checkCharts(t *testing.T, dir string, files ...string) {
	t.Helper()
	for _, name := range files {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
			continue
		}
		_, err = png.DecodeConfig(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A --plot that is not a directory one can write in is a usage error
// naming the flag, before the run (of an hour here) starts.
func TestLoadtestPlotUsage(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "turns.jsonl")
	line := `{"offset_ms":0,"event":{"specversion":"1.0","id":"a","source":"/t","type":"dev.toolwire.turn_end.v1","datacontenttype":"application/json","tenant":"default","turn":"turn_1","data":{"calls":0,"stop_reason":"end_turn"}}}`
	if err := os.WriteFile(log, []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"synth", "--duration", "1h", "--plot", file},
		{"synth", "--duration", "1h", "--compare", "--plot", filepath.Join(file, "sub")},
		{"replay", log, "--plot", file},
	} {
		cmd := newRoot()
		cmd.SetArgs(append([]string{"loadtest"}, args...))
		err := cmd.Execute()
		ee, ok := err.(*exitError)
		if !ok || ee.code != exitUsage || !strings.Contains(err.Error(), "--plot") {
			t.Errorf("%v: got %v, want a usage error naming --plot", args, err)
		}
	}
}

func TestLoadtestSynthUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--concurrency", "2", "--rate", "10"},
		{"--safe-share", "1.5"},
		{"--calls-per-turn", "5-2"},
		{"--duration", "0s"},
		{"--mode", "later"},
	} {
		cmd := newRoot()
		cmd.SetArgs(append([]string{"loadtest", "synth"}, args...))
		err := cmd.Execute()
		ee, ok := err.(*exitError)
		if !ok || ee.code != exitUsage || !strings.Contains(err.Error(), args[len(args)-2]) {
			t.Errorf("%v: got %v, want a usage error naming %s", args, err, args[len(args)-2])
		}
	}
}

// loadtest synth --compare runs both modes and writes the two reports and
// the ratio.
func TestLoadtestSynthCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two 3 s loads")
	}
	bin := sharedBinary(t)
	file := filepath.Join(t.TempDir(), "c.json")
	plots := t.TempDir()
	cmd := exec.Command(bin, "loadtest", "synth", "--compare", "--stream-time", "500ms", "--service-time", "50ms",
		"--duration", "3s", "--concurrency", "2", "--json", file, "--plot", plots)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("loadtest synth --compare: %v\n%s", err, out)
	}
	for _, want := range []string{"== streaming", "== wait-for-end", "turn_ratio"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cmp struct {
		Streaming  map[string]any `json:"streaming"`
		WaitForEnd map[string]any `json:"wait_for_end"`
		TurnRatio  *float64       `json:"turn_ratio"`
	}
	if err := json.Unmarshal(b, &cmp); err != nil {
		t.Fatalf("comparison: %v\n%s", err, b)
	}
	if cmp.TurnRatio == nil || *cmp.TurnRatio <= 0 || *cmp.TurnRatio >= 1 {
		t.Errorf("turn_ratio:\n%s", b)
	}
	for name, r := range map[string]map[string]any{"streaming": cmp.Streaming, "wait_for_end": cmp.WaitForEnd} {
		if r == nil || r["calls"].(float64) <= 0 || r["lost"].(float64) != 0 || r["concurrency_violations"].(float64) != 0 {
			t.Errorf("%s report:\n%s", name, b)
		}
	}
	checkCharts(t, plots, loadtest.PlotCompareLatencyHist, loadtest.PlotCompareLatencyTime, loadtest.PlotCompareThroughput)
}
