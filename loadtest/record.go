package loadtest

import (
	"context"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// RecordConfig says what Record captures.
type RecordConfig struct {
	// NATS is the URL of the live system's server (required).
	NATS string
	// NATSOptions sign in to it (credentials, TLS).
	NATSOptions []nats.Option
	// Tenant limits the capture to one tenant; empty takes every tenant.
	Tenant string
	// Turns stops the capture once this many distinct turns have ended
	// (turn_end or turn_discard seen); 0: no limit.
	Turns int
	// Duration stops the capture after this long; 0: no limit (Turns or
	// ctx then ends it).
	Duration time.Duration
	// Space is the pipeline's name space (default subjects.Default()).
	Space subjects.Space
	// Ready, when set, is closed once the subscription is in place.
	Ready chan<- struct{}
}

// RecordStats says what a capture wrote.
type RecordStats struct {
	// Events and Turns written; Skipped counts events of turns that had
	// not ended when the capture stopped (left out: a replay could not
	// complete them), Bad the messages that did not decode.
	Events, Turns, Skipped, Bad int
}

// Record subscribes (core NATS) to the input subjects of the system at
// c.NATS and writes each event of a turn that ended while recording to w,
// in the order received, with its offset from the first event. It stops
// after c.Turns ended turns, after c.Duration, or when ctx ends (not an
// error: what was seen is written).
func Record(ctx context.Context, c RecordConfig, w io.Writer) (RecordStats, error) {
	var st RecordStats
	switch {
	case c.NATS == "":
		return st, &ConfigError{Field: "nats", Msg: "record needs the URL of a live system"}
	case c.Turns < 0:
		return st, &ConfigError{Field: "turns", Msg: fmt.Sprintf("must not be negative, got %d", c.Turns)}
	case c.Duration < 0:
		return st, &ConfigError{Field: "duration", Msg: fmt.Sprintf("must not be negative, got %s", c.Duration)}
	}
	if c.Space == (subjects.Space{}) {
		c.Space = subjects.Default()
	}
	subject := c.Space.InAll()
	if c.Tenant != "" {
		if err := subjects.CheckToken("tenant", c.Tenant); err != nil {
			return st, &ConfigError{Field: "tenant", Msg: err.Error()}
		}
		subject = c.Space.In(c.Tenant, "*", "*")
	}
	nc, err := nats.Connect(c.NATS, append([]nats.Option{nats.Name("toolwire-loadtest-record")}, c.NATSOptions...)...)
	if err != nil {
		return st, fmt.Errorf("loadtest: connect %s: %w", c.NATS, err)
	}
	defer nc.Close()

	var (
		mu     sync.Mutex
		first  time.Time
		events []LogEvent
		ended  = newEndings()
		done   = make(chan struct{})
		closed bool
	)
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		now := time.Now()
		meta, data, err := schemas.Decode(m.Header, m.Data)
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return
		}
		if err != nil || !inputTypes[data.EventType()] {
			st.Bad++
			return
		}
		if p, perr := c.Space.ParseIn(m.Subject); perr == nil {
			// The subject is what routes the event; the headers may
			// leave the tenant out.
			meta.Tenant, meta.Turn = p.Tenant, p.Turn
		}
		if first.IsZero() {
			first = now
		}
		events = append(events, LogEvent{Offset: now.Sub(first), Meta: meta, Data: data})
		if ended.add(meta.Tenant+"/"+meta.Turn, data) && c.Turns > 0 && ended.turns() == c.Turns {
			closed = true
			close(done)
		}
	})
	if err != nil {
		return st, fmt.Errorf("loadtest: subscribe %s: %w", subject, err)
	}
	if err := nc.Flush(); err != nil {
		return st, fmt.Errorf("loadtest: subscribe %s: %w", subject, err)
	}
	if c.Ready != nil {
		close(c.Ready)
	}
	var timeout <-chan time.Time
	if c.Duration > 0 {
		tm := time.NewTimer(c.Duration)
		defer tm.Stop()
		timeout = tm.C
	}
	select {
	case <-done:
	case <-timeout:
	case <-ctx.Done():
	}
	_ = sub.Unsubscribe()
	mu.Lock()
	closed = true
	evs := events
	mu.Unlock()

	// Only ended turns: a replayed turn must be able to complete.
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Offset < evs[j].Offset })
	lw := NewLogWriter(w)
	var base time.Duration = -1
	for _, e := range evs {
		if !ended.has(e.Meta.Tenant + "/" + e.Meta.Turn) {
			st.Skipped++
			continue
		}
		if base < 0 {
			base = e.Offset
		}
		e.Offset -= base
		if err := lw.Write(e); err != nil {
			return st, err
		}
	}
	st.Events, st.Turns = lw.Lines(), ended.turns()
	return st, lw.Flush()
}

// endings tells when a turn's input is all in: at its turn_end or discard,
// or, for a turn whose calls carry its count (schemas.ToolUse.Calls), once
// every one of its calls came.
type endings struct {
	ended map[string]bool
	// calls is the seqs seen of each counted turn not yet ended, and
	// count its count: the first one it got, as in the pipeline.
	calls map[string]map[int]bool
	count map[string]int
}

func newEndings() *endings {
	return &endings{ended: map[string]bool{}, calls: map[string]map[int]bool{}, count: map[string]int{}}
}

// add takes an event of turn key; it reports whether the turn ended with it.
func (e *endings) add(key string, d schemas.Data) bool {
	if e.ended[key] {
		return false
	}
	switch d := d.(type) {
	case *schemas.TurnEnd, *schemas.TurnDiscard:
	case *schemas.ToolUse:
		seen := e.calls[key]
		if seen == nil {
			seen = map[int]bool{}
			e.calls[key] = seen
		}
		// Seqs are below the calls-per-turn limit (schemas checks it), so
		// the set is bounded.
		seen[d.Seq] = true
		if _, ok := e.count[key]; !ok && d.Calls > 0 {
			e.count[key] = d.Calls
		}
		n, ok := e.count[key]
		if !ok {
			return false
		}
		for seq := range n {
			if !seen[seq] {
				return false
			}
		}
	default:
		return false
	}
	delete(e.calls, key)
	delete(e.count, key)
	e.ended[key] = true
	return true
}

func (e *endings) has(key string) bool { return e.ended[key] }

func (e *endings) turns() int { return len(e.ended) }
