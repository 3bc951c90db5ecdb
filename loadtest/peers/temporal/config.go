package main

import (
	"fmt"
	"io"
	"time"

	"github.com/toolwire/toolwire/loadtest"
)

// Config is one run: the workload, with the meanings of toolwire's
// `loadtest synth` flags, and how Temporal is set up.
type Config struct {
	// Concurrency is the closed loop: this many turns in flight, each
	// worker starting its next turn when its last one's result arrived.
	Concurrency int
	// Rate is the open loop: calls per second, as turns started at even
	// intervals whatever Temporal's pace. Exactly one of Concurrency and
	// Rate is set.
	Rate float64
	// Duration is how long new turns are started; turns in flight then
	// finish, for at most Drain.
	Duration time.Duration
	// CallsPerTurn is the number of calls of each turn.
	CallsPerTurn loadtest.Range
	// SafeShare is the share of concurrency-safe calls, 0..1. The
	// command's default is 1 (every call safe: a turn's calls all run in
	// parallel, up to MaxConcurrency), where synth's is 0.5; synth with
	// --safe-share 1 is the matching workload.
	SafeShare float64
	// MaxConcurrency is the per-turn limit on calls running at once.
	MaxConcurrency int
	// Seed draws the turns as synth does, so the same flags give the same
	// turns.
	Seed uint64
	// Server is how the Temporal dev server is started.
	Server ServerConfig
	// Worker is how this process's Temporal worker is set up.
	Worker WorkerConfig
	// Tuning is TuningTuned (the default) or TuningStock.
	Tuning string
	// SlowTurn, when positive, has each turn slower than this described
	// on SlowLog (slowLog).
	SlowTurn time.Duration
	// SlowLog gets the slow turns; nil: Run's log.
	SlowLog io.Writer
}

// Drain is how long turns in flight at the end of the duration get before
// their missing results are counted lost: synth's drain with no service
// or stream time.
const Drain = 30 * time.Second

// withDefaults checks c and fills in what it leaves unset.
func (c Config) withDefaults() (Config, error) {
	s := c.schedule()
	if err := s.Check(); err != nil {
		return c, err
	}
	c.Concurrency = s.Concurrency
	if c.CallsPerTurn == (loadtest.Range{}) {
		c.CallsPerTurn = loadtest.Range{Min: 1, Max: 1}
	}
	if c.CallsPerTurn.Min < 1 || c.CallsPerTurn.Max < c.CallsPerTurn.Min {
		return c, fmt.Errorf("--calls-per-turn: want N ≥ 1 or MIN-MAX with 1 ≤ MIN ≤ MAX, got %d-%d", c.CallsPerTurn.Min, c.CallsPerTurn.Max)
	}
	if c.SafeShare < 0 || c.SafeShare > 1 {
		return c, fmt.Errorf("--safe-share: must be between 0 and 1, got %g", c.SafeShare)
	}
	if c.MaxConcurrency <= 0 {
		c.MaxConcurrency = loadtest.DefaultMaxConcurrency
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Tuning == "" {
		c.Tuning = TuningTuned
	}
	if err := tuning(c.Tuning).apply(&c); err != nil {
		return c, err
	}
	if err := c.Worker.check(); err != nil {
		return c, err
	}
	return c, c.Server.check()
}

// drawTurn draws turn k's safe flags exactly as synth draws its turn k, so
// that both run the same turns from the same seed.
func drawTurn(c Config, k uint64) []bool {
	return loadtest.DrawTurn(c.Seed, k, c.CallsPerTurn, c.SafeShare)
}

// schedule is how the driver starts turns: synth's loops.
func (c Config) schedule() loadtest.Schedule {
	return loadtest.Schedule{Concurrency: c.Concurrency, Rate: c.Rate, MeanCalls: float64(c.CallsPerTurn.Min+c.CallsPerTurn.Max) / 2, Duration: c.Duration}
}
