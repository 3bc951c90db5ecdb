package loadtest

import (
	"context"
	"fmt"
)

// Run runs the synthetic workload of c and reports it: on an embedded
// server with a pipeline in the process, or on the pipeline served at
// c.NATS. With c.Baseline it then measures, on the same server, a bare
// JetStream hop and the same workload run by an in-process executor.
func Run(ctx context.Context, c Config) (*Report, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	t, err := startTarget(ctx, c)
	if err != nil {
		return nil, err
	}
	defer t.close()

	resetPeakRSS()
	before := t.stageMsgs()
	b := newBar(c.Progress, "synth", c.Duration)
	rep := drive(ctx, c, t.turn(c), b.tick("synth"))
	b.finish()
	if t.p != nil && rep.Calls > 0 {
		rep.StageMsgsPerCall = float64(t.stageMsgs()-before) / float64(rep.Calls)
	}
	rep.RSSMiBMax = peakRSSMiB()
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	if !c.Baseline {
		return rep, nil
	}
	if rep.Baseline.Hop, err = hop(ctx, t.nc, c.Hops); err != nil {
		return rep, fmt.Errorf("loadtest: baseline: %w", err)
	}
	b = newBar(c.Progress, "in-process", c.Duration)
	in := drive(ctx, c, inprocTurn(c), b.tick("in-process"))
	b.finish()
	rep.Baseline.InprocCallsPerS, rep.Baseline.InprocTurn.P50 = in.CallsPerS, in.Turn.P50
	return rep, ctx.Err()
}
