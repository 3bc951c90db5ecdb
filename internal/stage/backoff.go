package stage

import "time"

// Backoff is the one retry policy of the stages: the n-th delivery of a
// message that asks for a retry waits Initial·Factorⁿ⁻¹, at most Max.
type Backoff struct {
	Initial time.Duration `json:"initial,omitempty"`
	Max     time.Duration `json:"max,omitempty"`
	Factor  float64       `json:"factor,omitempty"`
}

// Default back-off: fast first retries (a lease conflict, a result a few
// milliseconds early) and a cap that keeps a message's 20 deliveries
// within about half a minute.
const (
	DefaultBackoffInitial = 50 * time.Millisecond
	DefaultBackoffMax     = 2 * time.Second
	DefaultBackoffFactor  = 2
)

// WithDefaults fills the zero fields of b.
func (b Backoff) WithDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = DefaultBackoffInitial
	}
	if b.Max <= 0 {
		b.Max = DefaultBackoffMax
	}
	if b.Factor < 1 {
		b.Factor = DefaultBackoffFactor
	}
	return b
}

// Delay is the wait before the delivery after the delivered-th.
func (b Backoff) Delay(delivered int) time.Duration {
	d := float64(b.Initial)
	for i := 1; i < delivered && d < float64(b.Max); i++ {
		d *= b.Factor
	}
	return min(time.Duration(d), b.Max)
}
