package loadtest

import (
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// maxBuckets bounds a series: past it the buckets are merged pairwise and
// their width doubled, so a run of any length keeps at most this many
// (about 1 KiB each) and its charts at most this many points a line.
const maxBuckets = 600

// logBins counts latencies in bins an eighth of an octave wide (about 9 %)
// from 1 µs to 2^32 µs (71 minutes): coarse next to the run's
// HdrHistograms, but a chart of p50 and p99 per second needs no more, and
// it costs 1 KiB a bucket where an HdrHistogram of that range costs 190.
const (
	binsPerOctave = 8
	logBins       = 32 * binsPerOctave
)

// logHist is a latency distribution in logBins bins.
type logHist struct {
	n    int
	max  int64 // µs
	bins [logBins]uint32
}

func binOf(us int64) int {
	if us <= 1 {
		return 0
	}
	return min(int(math.Log2(float64(us))*binsPerOctave), logBins-1)
}

func (h *logHist) record(us int64) {
	h.n++
	h.max = max(h.max, us)
	h.bins[binOf(us)]++
}

func (h *logHist) merge(o *logHist) {
	h.n += o.n
	h.max = max(h.max, o.max)
	for i, c := range o.bins {
		h.bins[i] += c
	}
}

// quantile is the latency at q (0..100) in µs: the geometric middle of
// the bin it falls in, never above the largest value recorded.
func (h *logHist) quantile(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q / 100 * float64(h.n)))
	var seen uint64
	for i, c := range h.bins {
		if seen += uint64(c); seen >= max(rank, 1) {
			return min(math.Exp2((float64(i)+0.5)/binsPerOctave), float64(h.max))
		}
	}
	return float64(h.max)
}

// bucket is what arrived in one slice of the run's time.
type bucket struct {
	// results counts every result, latency known or not: the throughput.
	results int
	e2e     logHist
}

// series is a run's results over time for its charts: each result counted
// in the bucket of its arrival, counted from the run's start, with its e2e
// latency when its publish time is known.
type series struct {
	start time.Time
	width time.Duration
	// buckets[i] covers [start + i·width, start + (i+1)·width); nil when
	// nothing arrived then, so a pause in the run costs nothing.
	buckets []*bucket
}

func newSeries(start time.Time) *series {
	return &series{start: start, width: time.Second}
}

// add counts a result that arrived at at, with its e2e latency in µs;
// e2eUS < 0 is an unknown latency (a result whose publish time is not).
func (s *series) add(at time.Time, e2eUS int64) {
	off := max(at.Sub(s.start), 0)
	i := int(off / s.width)
	for i >= maxBuckets {
		s.coarsen()
		i = int(off / s.width)
	}
	if i >= len(s.buckets) {
		s.buckets = append(s.buckets, make([]*bucket, i+1-len(s.buckets))...)
	}
	b := s.buckets[i]
	if b == nil {
		b = &bucket{}
		s.buckets[i] = b
	}
	b.results++
	if e2eUS >= 0 {
		b.e2e.record(e2eUS)
	}
}

// coarsen doubles the buckets' width, merging them pairwise.
func (s *series) coarsen() {
	merged := make([]*bucket, (len(s.buckets)+1)/2)
	for i, b := range s.buckets {
		if b == nil {
			continue
		}
		m := merged[i/2]
		if m == nil {
			merged[i/2] = b
			continue
		}
		m.results += b.results
		m.e2e.merge(&b.e2e)
	}
	s.buckets = merged
	s.width *= 2
}

// plotData is what a report's charts are drawn from; it stays out of the
// report's JSON.
type plotData struct {
	// e2e is the whole run's e2e histogram (µs), for the latency histogram.
	e2e    *hdrhistogram.Histogram
	series *series
}
