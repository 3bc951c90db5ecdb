package loadtest

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// headroom is how far above the data a linear axis goes, so that the
// legend in the top corner sits over empty space.
const headroom = 1.3

// newPlot is a chart with a title, axis labels, a light grid under the
// data and the legend in its top right corner.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Tick.Marker, p.Y.Tick.Marker = niceTicks{}, niceTicks{}
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 0xd8}
	g.Horizontal.Color = color.Gray{Y: 0xd8}
	p.Add(g)
	p.Legend.Top = true
	return p
}

// niceTicks labels a linear axis every 1, 2 or 5 times a power of ten, so
// that there are five to ten labels, with a minor tick between two:
// gonum's default labels three or four, too few to read a value off.
type niceTicks struct{}

// Ticks returns the ticks of [lo, hi].
func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	decimals := max(0, -int(math.Floor(math.Log10(step))))
	var ticks []plot.Tick
	for i := math.Ceil(lo / step); i*step <= hi+step*1e-9; i++ {
		v := i * step
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
		if m := v + step/2; m <= hi {
			ticks = append(ticks, plot.Tick{Value: m})
		}
	}
	return ticks
}

// useLog makes an axis logarithmic, 1-2-5 ticks labelled, when its values
// (all positive) span at least ratio: a tail of slow calls then does not
// squash the body of the distribution into one corner.
func useLog(a *plot.Axis, lo, hi, ratio float64) bool {
	if lo <= 0 || hi/lo < ratio {
		return false
	}
	a.Scale = plot.LogScale{}
	a.Tick.Marker = logTicks{}
	return true
}

// logTicks labels a log axis at 1, 2 and 5 times the powers of ten (only
// the powers over more than four decades), with minor ticks between; a
// range too narrow for two labels gets the linear ticks instead.
type logTicks struct{}

// Ticks returns the ticks of [lo, hi].
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	first, last := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	var ticks []plot.Tick
	labels := 0
	for e := first; e <= last; e++ {
		for m := 1; m < 10; m++ {
			// Parsed, not multiplied, so that 5·10⁻³ is 0.005, not
			// 0.005000000000000001.
			v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, e), 64)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (last-first <= 4 && (m == 2 || m == 5)) {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
				labels++
			}
			ticks = append(ticks, t)
		}
	}
	if labels < 2 {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	return ticks
}

// line is a line of points in a color, width in points, dashed or not.
func line(xys plotter.XYs, col color.Color, width float64, dashes ...vg.Length) (*plotter.Line, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.LineStyle = draw.LineStyle{Color: col, Width: vg.Points(width), Dashes: dashes}
	return l, nil
}

// dashed and dotted are the dash patterns of the second and third line
// of a chart, after the solid one.
func dashed() []vg.Length { return []vg.Length{vg.Points(6), vg.Points(3)} }
func dotted() []vg.Length { return []vg.Length{vg.Points(1.5), vg.Points(2)} }

// withAlpha is col made see-through, so that two histograms overlap
// visibly.
func withAlpha(col color.RGBA, a uint8) color.NRGBA {
	return color.NRGBA{R: col.R, G: col.G, B: col.B, A: a}
}

// msLabel is a latency in ms with three significant digits, without an
// exponent.
func msLabel(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	case v >= 1:
		return fmt.Sprintf("%.2f ms", v)
	}
	return fmt.Sprintf("%.3f ms", v)
}

// noResults marks a chart with nothing to draw, its axes from 0 to 1
// rather than gonum's -1 to 1 around nothing.
func noResults(p *plot.Plot) {
	p.Title.Text += ": no results"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
}
