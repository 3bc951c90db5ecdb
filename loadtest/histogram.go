package loadtest

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// NewHistogram is the latency histogram a report's figures come from:
// microseconds up to an hour, three significant digits. The peers' load
// tests use it too, so that their figures are made the same way.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
}

// Micros is d in the histogram's unit; a negative d (clocks of two
// processes) counts as 0.
func Micros(d time.Duration) int64 { return max(d.Microseconds(), 0) }

// SpreadOf is h's quantiles and maximum in milliseconds.
func SpreadOf(h *hdrhistogram.Histogram) Spread {
	return Spread{P50: ms(h, 50), P90: ms(h, 90), P99: ms(h, 99), P999: ms(h, 99.9), Max: float64(h.Max()) / 1000}
}

// P50P99Of is h's median and 99th percentile in milliseconds.
func P50P99Of(h *hdrhistogram.Histogram) P50P99 { return P50P99{P50: ms(h, 50), P99: ms(h, 99)} }

func ms(h *hdrhistogram.Histogram, q float64) float64 {
	if h.TotalCount() == 0 {
		return 0
	}
	return float64(h.ValueAtQuantile(q)) / 1000
}
