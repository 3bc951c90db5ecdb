package loadtest

import (
	"context"
	"fmt"
)

// Run runs the synthetic workload of c and reports it: on an embedded
// server with a pipeline in the process, or on the pipeline served at
// c.NATS. With c.Baseline it then measures, on the same server, a bare
// JetStream hop and the same workload run by an in-process executor. With
// c.Plot it writes the run's charts there.
func Run(ctx context.Context, c Config) (*Report, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	// A directory that cannot take the charts fails now, not after the run.
	if c.Plot != "" {
		if err := preparePlotDir(c.Plot); err != nil {
			return nil, err
		}
	}
	rep, err := run(ctx, c)
	if err != nil || c.Plot == "" {
		return rep, err
	}
	return rep, rep.writePlots(c.Plot, "synth, "+c.Mode)
}

// run is Run on a checked config, its charts not written: with c.Plot the
// report keeps what they are drawn from.
func run(ctx context.Context, c Config) (*Report, error) {
	t, err := startTarget(ctx, c)
	if err != nil {
		return nil, err
	}
	defer t.close()

	ResetPeakRSS(0)
	before := t.stageMsgs()
	b := newBar(c.Progress, "synth", c.Duration)
	rep := drive(ctx, c, t.turn(c), b.tick("synth"))
	b.finish()
	if t.p != nil && rep.Calls > 0 {
		rep.StageMsgsPerCall = float64(t.stageMsgs()-before) / float64(rep.Calls)
	}
	rep.RSSMiBMax = PeakRSSMiB(0)
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
	// The charts are of the pipeline's run, not of the baseline's.
	ic := c
	ic.Plot = ""
	in := drive(ctx, ic, inprocTurn(ic), b.tick("in-process"))
	b.finish()
	rep.Baseline.InprocCallsPerS, rep.Baseline.InprocTurn.P50 = in.CallsPerS, in.Turn.P50
	return rep, ctx.Err()
}
