package loadtest

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// The charts' file names in the Plot directory (docs/loadtest.md).
const (
	// PlotLatencyHist is the histogram of the calls' e2e latency, p50 and
	// p99 marked.
	PlotLatencyHist = "latency_hist.png"
	// PlotLatencyTime is the e2e latency's p50, p99 and maximum per time
	// bucket against the time the results arrived.
	PlotLatencyTime = "latency_time.png"
	// PlotThroughput is the results received per second, per time bucket.
	PlotThroughput = "throughput.png"
	// PlotCompareLatencyHist is both modes' e2e latency histograms of a
	// comparison in one chart, as shares of their calls.
	PlotCompareLatencyHist = "compare_latency_hist.png"
	// PlotCompareLatencyTime is both modes' e2e p50 and p99 over time.
	PlotCompareLatencyTime = "compare_latency_time.png"
	// PlotCompareThroughput is both modes' throughput over time.
	PlotCompareThroughput = "compare_throughput.png"
)

// The charts' size: 864 × 480 pixels at the PNG canvas's 96 dpi.
const plotW, plotH = 9 * vg.Inch, 5 * vg.Inch

// modeColor is a mode's color, the same in every chart: blue for
// streaming (and a single run), orange for wait-for-end.
func modeColor(mode string) color.RGBA {
	if mode == ModeWaitForEnd {
		return color.RGBA{R: 0xe6, G: 0x6a, B: 0x00, A: 0xff}
	}
	return color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}
}

// trace is one run in a chart: its name in the legend and titles, its
// color, and its report with what the charts are drawn from.
type trace struct {
	name string
	col  color.RGBA
	r    *Report
}

// preparePlotDir makes dir, if missing, and checks that a chart can be
// written in it; an error names the flag.
func preparePlotDir(dir string) error {
	bad := func(format string, a ...any) error {
		return &ConfigError{Field: "plot", Msg: fmt.Sprintf(format, a...)}
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return bad("%s is not a directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return bad("cannot make the chart directory: %v", err)
	}
	// Only a file written tells whether the charts can be: permissions,
	// a read-only mount and the like.
	f, err := os.CreateTemp(dir, ".toolwire-plot-check-*")
	if err != nil {
		return bad("cannot write charts in %s: %v", dir, err)
	}
	name := f.Name()
	err = f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	if err != nil {
		return bad("cannot write charts in %s: %v", dir, err)
	}
	return nil
}

// writePlots writes the run's latency histogram, latency over time and
// throughput charts into dir; what names the run in the titles.
func (r *Report) writePlots(dir, what string) error {
	if r.plot == nil {
		return fmt.Errorf("loadtest: plot: the run kept no series")
	}
	ts := []trace{{name: what, col: modeColor(ModeStreaming), r: r}}
	return writeCharts(dir, []chart{
		{PlotLatencyHist, func() (*plot.Plot, error) { return latencyHist("e2e latency, "+what, false, ts) }},
		{PlotLatencyTime, func() (*plot.Plot, error) { return latencyTime("e2e latency over time, "+what, true, ts) }},
		{PlotThroughput, func() (*plot.Plot, error) { return throughput("throughput, "+what, ts) }},
	})
}

// writePlots writes both modes' charts side by side into dir.
func (c *Comparison) writePlots(dir string) error {
	if c.Streaming.plot == nil || c.WaitForEnd.plot == nil {
		return fmt.Errorf("loadtest: plot: the runs kept no series")
	}
	ts := []trace{
		{name: ModeStreaming, col: modeColor(ModeStreaming), r: c.Streaming},
		{name: ModeWaitForEnd, col: modeColor(ModeWaitForEnd), r: c.WaitForEnd},
	}
	const vs = "streaming vs wait-for-end"
	return writeCharts(dir, []chart{
		{PlotCompareLatencyHist, func() (*plot.Plot, error) { return latencyHist("e2e latency, "+vs, true, ts) }},
		{PlotCompareLatencyTime, func() (*plot.Plot, error) { return latencyTime("e2e latency over time, "+vs, false, ts) }},
		{PlotCompareThroughput, func() (*plot.Plot, error) { return throughput("throughput, "+vs, ts) }},
	})
}

// chart is a file of the Plot directory and how to draw it.
type chart struct {
	file string
	draw func() (*plot.Plot, error)
}

func writeCharts(dir string, charts []chart) error {
	for _, ch := range charts {
		p, err := ch.draw()
		if err == nil {
			err = p.Save(plotW, plotH, filepath.Join(dir, ch.file))
		}
		if err != nil {
			return fmt.Errorf("loadtest: plot %s: %w", ch.file, err)
		}
	}
	return nil
}
