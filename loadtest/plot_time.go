package loadtest

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

const timeAxis = "time since the run's start (result received), s"

// fewPoints is the number of points under which a line also shows its
// points: in a short run a line alone hides how few buckets it has.
const fewPoints = 20

// latencyTime is each trace's e2e latency p50 (solid) and p99 (dashed)
// per time bucket, at the middle of the bucket its results arrived in;
// withMax adds the bucket's slowest call (dotted) and gives each figure a
// color of its own, for a single trace. Buckets without a latency leave
// the line to join their neighbours. The values are from the series' bins,
// so within about 5 %.
func latencyTime(title string, withMax bool, ts []trace) (*plot.Plot, error) {
	p := newPlot(title+" (per "+widths(ts)+" bucket)", timeAxis, "e2e latency, ms")
	type figure struct {
		name   string
		q      float64 // 0..100, or 0 for the maximum
		col    color.Color
		width  float64
		dashes []vg.Length
	}
	lo, hi := math.Inf(1), 0.0
	type drawn struct {
		name string
		xys  plotter.XYs
		f    figure
	}
	var lines []drawn
	for _, t := range ts {
		figs := []figure{{"p50", 50, t.col, 2, nil}, {"p99", 99, t.col, 1.5, dashed()}}
		if withMax {
			figs[1].col = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
			figs = append(figs, figure{"max", 0, color.Gray{Y: 0x70}, 1, dotted()})
		}
		s := t.r.plot.series
		for _, f := range figs {
			var xys plotter.XYs
			for i, b := range s.buckets {
				if b == nil || b.e2e.n == 0 {
					continue
				}
				v := float64(b.e2e.max)
				if f.q > 0 {
					v = b.e2e.quantile(f.q)
				}
				v /= 1000
				lo, hi = min(lo, v), max(hi, v)
				xys = append(xys, plotter.XY{X: (float64(i) + 0.5) * s.width.Seconds(), Y: v})
			}
			name := f.name
			if len(ts) > 1 {
				name = t.name + " " + name
			}
			lines = append(lines, drawn{name, xys, f})
		}
	}
	if hi == 0 {
		noResults(p)
		return p, nil
	}
	logY := useLog(&p.Y, lo, hi, 20)
	for _, d := range lines {
		if len(d.xys) == 0 {
			continue
		}
		l, err := line(d.xys, d.f.col, d.f.width, d.f.dashes...)
		if err != nil {
			return nil, err
		}
		p.Add(l)
		if len(d.xys) < fewPoints {
			sc, err := plotter.NewScatter(d.xys)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: d.f.col, Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
			p.Add(sc)
		}
		p.Legend.Add(d.name, l)
	}
	if logY {
		p.Y.Max = hi * 3
	} else {
		p.Y.Min, p.Y.Max = 0, hi*headroom
	}
	p.X.Min = 0
	return p, nil
}

// throughput is each trace's results received per second in each time
// bucket, as steps over the bucket, and its mean over the run (calls_per_s,
// thin dashed). The last bucket holds the drain: its few results make the
// step there low.
func throughput(title string, ts []trace) (*plot.Plot, error) {
	p := newPlot(title+" (per "+widths(ts)+" bucket)", timeAxis, "results per second")
	top, end := 0.0, 0.0
	for _, t := range ts {
		s := t.r.plot.series
		w := s.width.Seconds()
		var xys plotter.XYs
		for i, b := range s.buckets {
			rate := 0.0
			if b != nil {
				rate = float64(b.results) / w
			}
			xys = append(xys, plotter.XY{X: float64(i) * w, Y: rate})
			top = max(top, rate)
		}
		if len(xys) == 0 {
			continue
		}
		// The last step runs to its bucket's end.
		xys = append(xys, plotter.XY{X: float64(len(s.buckets)) * w, Y: xys[len(xys)-1].Y})
		end = max(end, xys[len(xys)-1].X)
		l, err := line(xys, t.col, 2)
		if err != nil {
			return nil, err
		}
		l.StepStyle = plotter.PostStep
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s: mean %.0f/s", t.name, t.r.CallsPerS), l)
		top = max(top, t.r.CallsPerS)
	}
	if top == 0 {
		noResults(p)
		return p, nil
	}
	for _, t := range ts {
		if t.r.CallsPerS <= 0 {
			continue
		}
		l, err := line(plotter.XYs{{X: 0, Y: t.r.CallsPerS}, {X: end, Y: t.r.CallsPerS}}, t.col, 1, dashed()...)
		if err != nil {
			return nil, err
		}
		p.Add(l)
	}
	p.X.Min, p.Y.Min, p.Y.Max = 0, 0, top*headroom
	return p, nil
}

// widths is the traces' bucket widths, "1 s" or "1 s / 2 s" when a longer
// run's buckets were merged more.
func widths(ts []trace) string {
	var ws []string
	for _, t := range ts {
		if w := fmt.Sprintf("%g s", t.r.plot.series.width.Seconds()); !slices.Contains(ws, w) {
			ws = append(ws, w)
		}
	}
	return strings.Join(ws, " / ")
}
