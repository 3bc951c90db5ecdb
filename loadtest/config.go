// Package loadtest drives synthetic workloads through a toolwire pipeline
// and reports what a call costs: throughput, end-to-end latency and the
// pipeline's own overhead, with checks that every call was answered once,
// in order, under the start rule (docs/loadtest.md).
package loadtest

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// DefaultMaxConcurrency is the per-turn limit sent with every turn when
// Config.MaxConcurrency is 0 (the router's own default).
const DefaultMaxConcurrency = 10

// DefaultMaxInFlight is Config.MaxInFlight when it is 0.
const DefaultMaxInFlight = 1000

// Range is a number of calls per turn, drawn uniformly from Min..Max.
type Range struct{ Min, Max int }

// ParseRange reads "N" or "MIN-MAX".
func ParseRange(s string) (Range, error) {
	lo, hi, ranged := strings.Cut(strings.TrimSpace(s), "-")
	a, err := strconv.Atoi(lo)
	if err != nil {
		return Range{}, fmt.Errorf("%q: want N or MIN-MAX", s)
	}
	b := a
	if ranged {
		if b, err = strconv.Atoi(hi); err != nil {
			return Range{}, fmt.Errorf("%q: want N or MIN-MAX", s)
		}
	}
	return Range{Min: a, Max: b}, nil
}

func (r Range) mean() float64 { return float64(r.Min+r.Max) / 2 }

// Config is a synthetic workload and where it runs.
type Config struct {
	// Concurrency is the closed loop: this many turns in flight, each
	// followed by the next as soon as its turn_done arrives.
	Concurrency int
	// Rate is the open loop: calls per second, in turns started at even
	// intervals whatever the pipeline's pace. Exactly one of Concurrency
	// and Rate is set.
	Rate float64
	// MaxInFlight bounds the open loop's turns in flight (default
	// DefaultMaxInFlight): a turn due while the bound is reached waits for
	// one to finish, so a pipeline that cannot keep up slows the producer
	// down instead of the producer's backlog growing without bound.
	MaxInFlight int
	// Duration is how long new turns are started; turns in flight then
	// finish (or are counted lost after a drain deadline).
	Duration time.Duration
	// CallsPerTurn is the number of calls of each turn (default 1).
	CallsPerTurn Range
	// SafeShare is the share of concurrency-safe calls, 0..1.
	SafeShare float64
	// ServiceTime is how long a call runs: 0 is Noop (an unsafe call is
	// Sleep 0 ms, Noop being always safe), more is Sleep for that many
	// milliseconds.
	ServiceTime time.Duration
	// StreamTime spreads a turn's calls evenly over this time, as a
	// streaming model publishes them (SubmitCall one by one, then
	// EndTurn); 0 publishes the whole turn at once (SubmitCalls).
	StreamTime time.Duration
	// Mode is ModeStreaming (the default: each call published as its
	// block completes) or ModeWaitForEnd (the turn's calls held until its
	// stream time has passed, then published together).
	Mode string
	// MaxConcurrency is the per-turn limit (default DefaultMaxConcurrency).
	MaxConcurrency int
	// NATS is the URL of a served pipeline; empty starts an embedded
	// server and a pipeline in the process.
	NATS string
	// NATSOptions sign in to it (credentials, TLS).
	NATSOptions []nats.Option
	// Executors counts the in-process pipeline's executors (default 2).
	Executors int
	// Baseline also measures a bare JetStream hop and the same workload
	// run by an in-process executor.
	Baseline bool
	// Hops is how many hops the baseline measures (default 2,000).
	Hops int
	// Seed makes the workload (calls per turn, safe flags) repeatable.
	Seed uint64
	// Progress, when set, gets a live progress bar.
	Progress io.Writer
	// Plot, when set, is a directory (created if missing) that Run and
	// Compare write PNG charts of the run into (docs/loadtest.md); it is
	// checked before the run starts.
	Plot string
}

// ConfigError names the field (as the command's flag) that is wrong.
type ConfigError struct {
	Field string
	Msg   string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("--%s: %s", e.Field, e.Msg) }

// schedule is how c starts its turns.
func (c Config) schedule() Schedule {
	return Schedule{Concurrency: c.Concurrency, Rate: c.Rate, MeanCalls: c.CallsPerTurn.mean(), MaxInFlight: c.MaxInFlight, Duration: c.Duration}
}

// withDefaults checks c and fills in what it leaves unset.
func (c Config) withDefaults() (Config, error) {
	bad := func(f, format string, a ...any) (Config, error) {
		return c, &ConfigError{Field: f, Msg: fmt.Sprintf(format, a...)}
	}
	s := c.schedule()
	if err := s.Check(); err != nil {
		return c, err
	}
	c.Concurrency = s.Concurrency
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.CallsPerTurn == (Range{}) {
		c.CallsPerTurn = Range{1, 1}
	}
	if c.CallsPerTurn.Min < 1 || c.CallsPerTurn.Max < c.CallsPerTurn.Min {
		return bad("calls-per-turn", "want N ≥ 1 or MIN-MAX with 1 ≤ MIN ≤ MAX, got %d-%d", c.CallsPerTurn.Min, c.CallsPerTurn.Max)
	}
	if c.SafeShare < 0 || c.SafeShare > 1 {
		return bad("safe-share", "must be between 0 and 1, got %g", c.SafeShare)
	}
	if c.ServiceTime < 0 {
		return bad("service-time", "must not be negative, got %s", c.ServiceTime)
	}
	if c.ServiceTime > 0 && c.ServiceTime < time.Millisecond {
		return bad("service-time", "the Sleep tool counts milliseconds: want 0 or at least 1ms, got %s", c.ServiceTime)
	}
	if c.StreamTime < 0 {
		return bad("stream-time", "must not be negative, got %s", c.StreamTime)
	}
	switch c.Mode {
	case "":
		c.Mode = ModeStreaming
	case ModeStreaming, ModeWaitForEnd:
	default:
		return bad("mode", "want %s or %s, got %q", ModeStreaming, ModeWaitForEnd, c.Mode)
	}
	if c.MaxConcurrency < 0 {
		return bad("max-concurrency", "must be positive, got %d", c.MaxConcurrency)
	}
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = DefaultMaxConcurrency
	}
	if c.Executors <= 0 {
		c.Executors = 2
	}
	if c.Hops <= 0 {
		c.Hops = 2000
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c, nil
}
