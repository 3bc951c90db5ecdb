package loadtest

import (
	"math"
	"testing"
	"time"
)

// A long run keeps at most maxBuckets buckets, wider ones, and loses no
// result.
func TestSeriesBounded(t *testing.T) {
	start := time.Unix(1000, 0)
	s := newSeries(start)
	const n = 100_000
	for i := range n {
		// A result every 100 ms for almost three hours, out of order as
		// the turns end.
		at := start.Add(time.Duration((i*7919)%n) * 100 * time.Millisecond)
		s.add(at, int64(1000+i%1000))
	}
	if len(s.buckets) > maxBuckets || s.width != 32*time.Second {
		t.Fatalf("%d buckets of %s", len(s.buckets), s.width)
	}
	results, lat := 0, 0
	for _, b := range s.buckets {
		if b != nil {
			results += b.results
			lat += b.e2e.n
		}
	}
	if results != n || lat != n {
		t.Errorf("%d results, %d latencies, want %d", results, lat, n)
	}
}

// The bins' quantiles are within their width of the true ones.
func TestLogHistQuantile(t *testing.T) {
	var h logHist
	for v := range int64(10_000) {
		h.record(v + 1)
	}
	for q, want := range map[float64]float64{50: 5000, 99: 9900, 100: 10_000} {
		if got := h.quantile(q); math.Abs(got-want)/want > 0.05 {
			t.Errorf("p%g = %.0f, want %.0f within 5 %%", q, got, want)
		}
	}
	if h.quantile(100) > 10_000 {
		t.Errorf("max %f above the largest value", h.quantile(100))
	}
	var e logHist
	if e.quantile(50) != 0 {
		t.Error("an empty histogram's median is not 0")
	}
	// An unknown latency counts the result, not a latency.
	s := newSeries(time.Unix(0, 0))
	s.add(time.Unix(0, 0), -1)
	if b := s.buckets[0]; b.results != 1 || b.e2e.n != 0 {
		t.Errorf("bucket %+v", *b)
	}
}
