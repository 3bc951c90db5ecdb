package loadtest

import (
	"context"
	"errors"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolwire/toolwire/schemas"
)

// checkPNGs checks that each file is in dir and decodes as a PNG of the
// charts' size.
func checkPNGs(t *testing.T, dir string, files ...string) {
	t.Helper()
	for _, name := range files {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
			continue
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if b := img.Bounds(); b.Dx() != 864 || b.Dy() != 480 {
			t.Errorf("%s: %d×%d pixels, want 864×480", name, b.Dx(), b.Dy())
		}
	}
}

// A synthetic run with Plot writes its three charts, into a directory it
// makes.
func TestPlotSynth(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "charts", "synth")
	runOK(t, Config{Concurrency: 2, Duration: 1500 * time.Millisecond, CallsPerTurn: Range{1, 4}, SafeShare: 0.5,
		ServiceTime: time.Millisecond, Plot: dir})
	checkPNGs(t, dir, PlotLatencyHist, PlotLatencyTime, PlotThroughput)
	if _, err := os.Stat(filepath.Join(dir, PlotCompareThroughput)); err == nil {
		t.Error("a single run wrote a comparison chart")
	}
}

// A comparison with Plot writes both modes side by side.
func TestPlotCompare(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	cmp, err := Compare(ctx, Config{Concurrency: 2, Duration: time.Second, CallsPerTurn: Range{3, 3}, SafeShare: 0.5,
		ServiceTime: 20 * time.Millisecond, StreamTime: 200 * time.Millisecond, Plot: dir})
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Failed() {
		t.Fatalf("checks failed: %+v / %+v", *cmp.Streaming, *cmp.WaitForEnd)
	}
	checkPNGs(t, dir, PlotCompareLatencyHist, PlotCompareLatencyTime, PlotCompareThroughput)
}

// A replay with Plot writes the single run's charts.
func TestPlotReplay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	rep, err := Replay(ctx, ReplayConfig{Speed: 2, Plot: dir}, spreadLog(20, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Calls != 40 || rep.Failed() {
		t.Fatalf("replay: %+v", *rep.Report)
	}
	checkPNGs(t, dir, PlotLatencyHist, PlotLatencyTime, PlotThroughput)
}

// spreadLog is turns of two calls each, evenly over span.
func spreadLog(turns int, span time.Duration) []LogEvent {
	var log []LogEvent
	for k := range turns {
		at := span * time.Duration(k) / time.Duration(turns)
		meta := func(seq int) schemas.Meta {
			return schemas.Meta{ID: fmt.Sprintf("e%d.%d", k, seq), Source: "/test", Tenant: "default", Turn: fmt.Sprintf("turn_%d", k), Seq: seq}
		}
		log = append(log,
			LogEvent{Offset: at, Meta: meta(0), Data: &schemas.ToolUse{Seq: 0, ToolUseID: "a", Name: "Noop", Input: schemas.RawJSON(`{"n":1}`), Complete: true}},
			LogEvent{Offset: at, Meta: meta(1), Data: &schemas.ToolUse{Seq: 1, ToolUseID: "b", Name: "Sleep", Input: schemas.RawJSON(`{"ms":2,"safe":false}`), Complete: true}},
			LogEvent{Offset: at + time.Millisecond, Meta: meta(-1), Data: &schemas.TurnEnd{Calls: 2, StopReason: "tool_use"}},
		)
	}
	return log
}

// A Plot directory that cannot take the charts is a ConfigError naming
// the flag, before anything runs.
func TestPlotBadDir(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []string{file, filepath.Join(file, "sub")}
	if os.Geteuid() != 0 {
		// Root writes in a read-only directory all the same.
		ro := filepath.Join(tmp, "read-only")
		if err := os.Mkdir(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		bad = append(bad, ro)
	}
	// A cancelled context: a check made only after the run started would
	// fail with the context's error instead.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := Config{Concurrency: 1, Duration: time.Hour}
	for _, dir := range bad {
		c.Plot = dir
		_, errRun := Run(ctx, c)
		_, errCmp := Compare(ctx, c)
		_, errReplay := Replay(ctx, ReplayConfig{Plot: dir}, spreadLog(1, 0))
		for what, err := range map[string]error{"Run": errRun, "Compare": errCmp, "Replay": errReplay} {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != "plot" {
				t.Errorf("%s with Plot %s: %v, want a ConfigError on plot", what, dir, err)
			}
		}
		t.Logf("%s: %v", dir, errRun)
	}
}

// The charts of a long run (buckets merged, a tail that takes the log
// axes) and of a run with no results are drawn all the same.
func TestPlotChartsOfSeries(t *testing.T) {
	start := time.Unix(1000, 0)
	long := newTally(10, start, true)
	for i := range 20_000 {
		e2e := time.Duration(500+i%1000) * time.Microsecond
		if i%200 == 0 {
			e2e *= 100
		}
		done := start.Add(time.Duration(i) * 100 * time.Millisecond)
		long.add(&turnObs{spec: turnSpec{safe: []bool{true}}, pubAt: []time.Time{done.Add(-e2e)},
			deliveries: []delivery{{seq: 0, at: done, start: done.Add(-e2e), finish: done.Add(-e2e)}}, doneAt: done})
	}
	for name, r := range map[string]*Report{"long": long.report(), "empty": newTally(10, start, true).report()} {
		dir := t.TempDir()
		if err := r.writePlots(dir, name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkPNGs(t, dir, PlotLatencyHist, PlotLatencyTime, PlotThroughput)
		cmp := &Comparison{Streaming: r, WaitForEnd: r}
		if err := cmp.writePlots(dir); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkPNGs(t, dir, PlotCompareLatencyHist, PlotCompareLatencyTime, PlotCompareThroughput)
	}
	if w := long.series.width; w != 4*time.Second {
		t.Errorf("a 2000 s run's buckets are %s wide, want 4s", w)
	}
}
