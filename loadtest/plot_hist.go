package loadtest

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// histBins is how many bins a latency histogram has.
const histBins = 40

// latencyHist is each trace's e2e latency histogram, all over the same
// bins, spaced logarithmically from the fastest call to the slowest so
// that a tight body and a long tail are both visible (the axis too is
// logarithmic over a span of ten or more). The bins are filled from the
// run's own HdrHistogram, so every call is in them. share draws each
// trace as shares of its calls, so that runs of different sizes compare,
// with its p50 marked; otherwise a trace is drawn as counts with its p50
// and p99 marked.
func latencyHist(title string, share bool, ts []trace) (*plot.Plot, error) {
	p := newPlot(title, "e2e latency, ms (log-spaced bins)", "calls per bin")
	if share {
		p.Y.Label.Text = "share of calls per bin, %"
	}
	lo, hi := math.Inf(1), 0.0
	for _, t := range ts {
		if h := t.r.plot.e2e; h.TotalCount() > 0 {
			lo, hi = min(lo, float64(max(h.Min(), 1))/1000), max(hi, float64(h.Max())/1000)
		}
	}
	if hi == 0 {
		noResults(p)
		return p, nil
	}
	// One value, or nearly: a range for the bins to spread over.
	hi = max(hi, lo*1.1)
	useLog(&p.X, lo, hi, 10)
	top := 0.0
	for _, t := range ts {
		bins, n := histogramBins(t, lo, hi, share)
		if n == 0 {
			continue
		}
		h := &plotter.Histogram{Bins: bins, FillColor: withAlpha(t.col, 0xd0),
			LineStyle: draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}}
		if share {
			h.FillColor = withAlpha(t.col, 0x70)
			h.LineStyle = draw.LineStyle{Color: t.col, Width: vg.Points(1)}
		}
		p.Add(h)
		p.Legend.Add(fmt.Sprintf("%s: %d calls", t.name, n), h)
		for _, b := range bins {
			top = max(top, b.Weight)
		}
	}
	// The marks stop a little above the tallest bin, below the legend.
	markTop := top * 1.08
	top *= headroom
	for _, t := range ts {
		marks := []struct {
			q, v  float64
			col   color.Color
			width float64
		}{{50, t.r.E2E.P50, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, 2}, {99, t.r.E2E.P99, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, 2}}
		if share {
			// Two traces' p99 lines as well would be four vertical lines
			// to tell apart: the p50 in the trace's color is enough.
			marks = marks[:1]
			marks[0].col = t.col
		}
		for _, m := range marks {
			if m.v <= 0 {
				continue
			}
			l, err := line(plotter.XYs{{X: m.v, Y: 0}, {X: m.v, Y: markTop}}, m.col, m.width, dashed()...)
			if err != nil {
				return nil, err
			}
			p.Add(l)
			name := fmt.Sprintf("p%g %s", m.q, msLabel(m.v))
			if share {
				name = t.name + " " + name
			}
			p.Legend.Add(name, l)
		}
	}
	p.Y.Min, p.Y.Max = 0, top
	return p, nil
}

// histogramBins spreads the trace's e2e histogram over histBins bins
// log-spaced over [lo, hi] ms, as counts or as percentages of its calls;
// n is its calls.
func histogramBins(t trace, lo, hi float64, share bool) (_ []plotter.HistogramBin, n int64) {
	h := t.r.plot.e2e
	n = h.TotalCount()
	if n == 0 {
		return nil, 0
	}
	bins := make([]plotter.HistogramBin, histBins)
	span := math.Log(hi / lo)
	for k := range bins {
		bins[k].Min = lo * math.Exp(span*float64(k)/histBins)
		bins[k].Max = lo * math.Exp(span*float64(k+1)/histBins)
	}
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		v := max(float64(bar.From+bar.To)/2000, lo)
		k := min(max(int(histBins*math.Log(v/lo)/span), 0), histBins-1)
		bins[k].Weight += float64(bar.Count)
	}
	if share {
		for k := range bins {
			bins[k].Weight *= 100 / float64(n)
		}
	}
	return bins, n
}
