package loadtest

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"
)

// Report is the result of a run, in the JSON shape scripts read
// (docs/loadtest.md). Times are milliseconds.
type Report struct {
	Calls                 int      `json:"calls"`
	Turns                 int      `json:"turns"`
	DurationS             float64  `json:"duration_s"`
	CallsPerS             float64  `json:"calls_per_s"`
	E2E                   Spread   `json:"e2e_ms"`
	Overhead              P50P99   `json:"overhead_ms"`
	FirstResult           P50P99   `json:"first_result_ms"`
	Turn                  P50P99   `json:"turn_ms"`
	StageMsgsPerCall      float64  `json:"stage_msgs_per_call"`
	Lost                  int      `json:"lost"`
	Duplicates            int      `json:"duplicates"`
	OrderViolations       int      `json:"order_violations"`
	ConcurrencyViolations int      `json:"concurrency_violations"`
	RSSMiBMax             float64  `json:"rss_mib_max"`
	Baseline              Baseline `json:"baseline"`

	// Errors counts error results and failed submissions; not part of the
	// JSON shape.
	Errors int `json:"-"`
	// HeldBack counts the open loop's turns that started late because
	// Config.MaxInFlight turns were in flight, and HeldBackMax is the
	// latest start; the pipeline could not keep up with the rate. Their
	// latencies count from their actual start. Not part of the JSON shape.
	HeldBack    int           `json:"-"`
	HeldBackMax time.Duration `json:"-"`

	// plot is what the charts are drawn from, kept when Config.Plot (or
	// ReplayConfig.Plot) is set; unexported, so never in the JSON.
	plot *plotData
}

// Spread is a latency distribution's quantiles and maximum.
type Spread struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// P50P99 is a latency's median and 99th percentile.
type P50P99 struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
}

// P50 is a latency's median.
type P50 struct {
	P50 float64 `json:"p50"`
}

// Baseline is what the run is compared with; zeros when it did not run.
type Baseline struct {
	Hop             P50P99  `json:"hop_ms"`
	InprocCallsPerS float64 `json:"inproc_calls_per_s"`
	InprocTurn      P50     `json:"inproc_turn_ms"`
}

// Failed says whether a check found a call lost, duplicated, out of order
// or run against the start rule.
func (r *Report) Failed() bool {
	return r.Lost+r.Duplicates+r.OrderViolations+r.ConcurrencyViolations > 0
}

// WriteJSON writes the report as one indented JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(r)
}

// WriteJSONFile writes r (a Report, a Comparison) to the file at path, as
// --json does.
func WriteJSONFile(path string, r interface{ WriteJSON(io.Writer) error }) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := r.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteSummary writes the few lines a person reads.
func (r *Report) WriteSummary(w io.Writer) error {
	_, err := fmt.Fprintf(w, `calls %d in %d turns over %.1f s: %.0f calls/s
e2e           p50 %.3f ms  p90 %.3f ms  p99 %.3f ms  p99.9 %.3f ms  max %.3f ms
overhead      p50 %.3f ms  p99 %.3f ms
first result  p50 %.3f ms  p99 %.3f ms
turn          p50 %.3f ms  p99 %.3f ms
checks        lost %d  duplicates %d  order violations %d  concurrency violations %d  (error results %d)
stage msgs/call %.1f  max RSS %.0f MiB
`, r.Calls, r.Turns, r.DurationS, r.CallsPerS,
		r.E2E.P50, r.E2E.P90, r.E2E.P99, r.E2E.P999, r.E2E.Max,
		r.Overhead.P50, r.Overhead.P99, r.FirstResult.P50, r.FirstResult.P99, r.Turn.P50, r.Turn.P99,
		r.Lost, r.Duplicates, r.OrderViolations, r.ConcurrencyViolations, r.Errors,
		r.StageMsgsPerCall, r.RSSMiBMax)
	if err == nil && r.HeldBack > 0 {
		_, err = fmt.Fprintf(w, "held back     %d turns started late, by up to %.1f s: the pipeline did not keep up with the rate, and slowed the producer\n",
			r.HeldBack, r.HeldBackMax.Seconds())
	}
	if err != nil || r.Baseline.Hop.P50 == 0 {
		return err
	}
	_, err = fmt.Fprintf(w, `baseline      hop p50 %.3f ms  p99 %.3f ms  (e2e p50 / hop p50 = %.1f)
              in-process executor %.0f calls/s, turn p50 %.3f ms
`, r.Baseline.Hop.P50, r.Baseline.Hop.P99, r.E2E.P50/r.Baseline.Hop.P50,
		r.Baseline.InprocCallsPerS, r.Baseline.InprocTurn.P50)
	return err
}
