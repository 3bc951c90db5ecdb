package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// Comparison is the same workload run in both modes, one after the other
// (docs/loadtest.md).
type Comparison struct {
	Streaming  *Report `json:"streaming"`
	WaitForEnd *Report `json:"wait_for_end"`
	// TurnRatio is the streaming turn time p50 over the wait-for-end one:
	// under 1 when executing calls at block completion saves time.
	TurnRatio float64 `json:"turn_ratio"`
	// FirstResultRatio is the same for the first result p50; summary only.
	FirstResultRatio float64 `json:"-"`
}

// Compare runs the workload of c (same seed, so the same turns) in
// streaming mode, then in wait-for-end mode, each on a server and pipeline
// of its own, and compares them. c.Mode is ignored. With c.Plot it writes
// the charts of both modes side by side there.
func Compare(ctx context.Context, c Config) (*Comparison, error) {
	var cmp Comparison
	c.Mode = ModeStreaming
	c, err := c.withDefaults()
	if err != nil {
		return &cmp, err
	}
	if c.Plot != "" {
		if err := preparePlotDir(c.Plot); err != nil {
			return &cmp, err
		}
	}
	if cmp.Streaming, err = run(ctx, c); err != nil {
		return &cmp, err
	}
	c.Mode = ModeWaitForEnd
	if cmp.WaitForEnd, err = run(ctx, c); err != nil {
		return &cmp, err
	}
	cmp.TurnRatio = ratio(cmp.Streaming.Turn.P50, cmp.WaitForEnd.Turn.P50)
	cmp.FirstResultRatio = ratio(cmp.Streaming.FirstResult.P50, cmp.WaitForEnd.FirstResult.P50)
	if c.Plot == "" {
		return &cmp, nil
	}
	return &cmp, cmp.writePlots(c.Plot)
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Failed says whether a check failed in either mode.
func (c *Comparison) Failed() bool {
	return c.Streaming.Failed() || c.WaitForEnd.Failed()
}

// WriteJSON writes the comparison as one indented JSON object.
func (c *Comparison) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(c)
}

// WriteSummary writes both modes' summaries and the ratios.
func (c *Comparison) WriteSummary(w io.Writer) error {
	for _, m := range []struct {
		name string
		r    *Report
	}{{"streaming (calls published as their blocks complete)", c.Streaming}, {"wait-for-end (calls held until the stream ended)", c.WaitForEnd}} {
		if _, err := fmt.Fprintf(w, "== %s\n", m.name); err != nil {
			return err
		}
		if err := m.r.WriteSummary(w); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, `== streaming / wait-for-end
turn          p50 %.3f ms / %.3f ms = %.3f (turn_ratio)
first result  p50 %.3f ms / %.3f ms = %.3f
`, c.Streaming.Turn.P50, c.WaitForEnd.Turn.P50, c.TurnRatio,
		c.Streaming.FirstResult.P50, c.WaitForEnd.FirstResult.P50, c.FirstResultRatio)
	return err
}
