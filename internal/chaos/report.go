package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Report is what a chaos run found, in the shape of its --json file.
type Report struct {
	Calls               int     `json:"calls"`
	Turns               int     `json:"turns"`
	Kills               int     `json:"kills"`
	Lost                int     `json:"lost"`
	Duplicates          int     `json:"duplicates"`
	OrderViolations     int     `json:"order_violations"`
	SideEffectsTwice    int     `json:"side_effects_twice"`
	OutcomeUnknown      int     `json:"outcome_unknown"`
	RecoveryMS          Summary `json:"recovery_ms"`
	NodeRecoveryMS      float64 `json:"node_recovery_ms"`
	MalformedSent       int     `json:"malformed_sent"`
	DeadLetters         int     `json:"dead_letters"`
	GoodTurnsIncomplete int     `json:"good_turns_incomplete"`
	// RSSMiBMax is each process's largest resident set over its lives.
	RSSMiBMax map[string]float64 `json:"rss_mib_max"`

	// Waited counts the turns of an open loop that waited for a slot.
	Waited int `json:"-"`
	// Recovered counts the calls the executor kills left behind.
	Recovered int `json:"-"`
	// OrphanWrites counts ledger lines written after their call was
	// answered "outcome unknown": a killed worker's command that lived on.
	OrphanWrites int `json:"-"`
	// Exited names the processes that exited without being killed.
	Exited []string `json:"-"`
	// DeadLettersAll counts every dead letter, also those of good turns.
	DeadLettersAll int `json:"-"`
	// Revived counts the finished turns a late event made live again (a
	// lease with a call past the turn's count), and names some.
	Revived     int      `json:"-"`
	RevivedSome []string `json:"-"`
	// Diagnosis says where the first incomplete turn stood.
	Diagnosis string `json:"-"`
	// Undead counts the malformed events without a dead letter, by kind.
	Undead map[string]int `json:"-"`
	// OtherDeadLetters are some dead letters of good turns, with reasons.
	OtherDeadLetters []string `json:"-"`
	// Dir keeps the run's logs and ledger when the run failed.
	Dir string `json:"-"`
	// Bounds are the run's MaxRecovery and MaxNodeRecovery.
	Bounds [2]time.Duration `json:"-"`
	// ElectionMS is how long after the node's kill the last stream or
	// consumer leader was elected (the servers' logs): the cluster's own
	// failover, which no turn can beat.
	ElectionMS float64 `json:"-"`
	// SlowestRecovery names the call a killed executor left that took
	// longest to be started again or answered, with what the run saw of
	// its turn after the kill.
	SlowestRecovery string `json:"-"`
	// SlowestTimeline is what the run saw of that turn after the kill.
	SlowestTimeline string `json:"-"`
	// SlowestAfterNode is the turn that took longest to progress after the
	// node's kill.
	SlowestAfterNode string `json:"-"`
	// Slowest is the turn that took longest, and how long (ms).
	Slowest   string  `json:"-"`
	SlowestMS float64 `json:"-"`
	// Incomplete names some of the turns that never completed.
	Incomplete []string `json:"-"`
	// RecoveryWithWaitMS is RecoveryMS with the time each call then
	// waited for its turn's earlier calls to run again counted in: from
	// the kill until started or answered, in which a parked call of a
	// serial turn includes its predecessors' tools.
	RecoveryWithWaitMS Summary `json:"-"`
	// DuringFailover are the calls left by executors killed while a NATS
	// node was away or its streams were electing new leaders (within
	// failoverWindow of its kill): their recovery waits for the cluster,
	// not for the executors, and is reported apart.
	DuringFailover Summary `json:"-"`
	FailoverCalls  int     `json:"-"`
}

// Summary is a distribution in milliseconds.
type Summary struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// The bounds the checks hold a run to, unless Config says otherwise.
const (
	// DefaultMaxRecovery bounds the time from an executor's kill until
	// each call it left is started elsewhere or answered.
	DefaultMaxRecovery = 2 * time.Second
	// DefaultMaxNodeRecovery bounds the time from a NATS node's kill until
	// every turn in flight made progress.
	DefaultMaxNodeRecovery = 10 * time.Second
	// failoverWindow is how long after a node's kill an executor's kill
	// counts as one during the cluster's failover: the node is away for
	// nodeDown, and a stream whose leader it was elects another within
	// the election timeout of NATS's Raft groups (4 to 9 s).
	failoverWindow = DefaultMaxNodeRecovery
)

// Failed reports whether a check failed.
func (r *Report) Failed() bool {
	return len(r.Problems()) > 0
}

// Problems lists the failed checks, one line each.
func (r *Report) Problems() []string {
	var p []string
	add := func(bad bool, format string, args ...any) {
		if bad {
			p = append(p, fmt.Sprintf(format, args...))
		}
	}
	add(r.Lost > 0, "%d calls lost", r.Lost)
	add(r.Duplicates > 0, "%d results stored twice", r.Duplicates)
	add(r.OrderViolations > 0, "%d results out of order", r.OrderViolations)
	add(r.SideEffectsTwice > 0, "%d side effects ran twice", r.SideEffectsTwice)
	add(r.GoodTurnsIncomplete > 0, "%d turns never completed", r.GoodTurnsIncomplete)
	add(r.RecoveryMS.Max > ms(r.Bounds[0]), "a call took %.0f ms to recover from its executor's kill (bound %.0f)", r.RecoveryMS.Max, ms(r.Bounds[0]))
	add(r.NodeRecoveryMS > ms(r.Bounds[1]), "turns took %.0f ms to make progress after a node's kill (bound %.0f)", r.NodeRecoveryMS, ms(r.Bounds[1]))
	add(r.DeadLetters < r.MalformedSent, "%d of %d malformed events have no dead letter", r.MalformedSent-r.DeadLetters, r.MalformedSent)
	add(r.OrphanWrites > 0, "%d side effects were written after their call was answered \"outcome unknown\"", r.OrphanWrites)
	add(r.Revived > 0, "%d finished turns were made live again by a late call: %s", r.Revived, strings.Join(r.RevivedSome, ", "))
	add(len(r.Exited) > 0, "exited on their own: %s", strings.Join(r.Exited, ", "))
	return p
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// WriteJSON writes the report's JSON shape.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteSummary prints the report for a person.
func (r *Report) WriteSummary(w io.Writer) error {
	names := make([]string, 0, len(r.RSSMiBMax))
	for n := range r.RSSMiBMax {
		names = append(names, n)
	}
	slices.Sort(names)
	var rss []string
	for _, n := range names {
		rss = append(rss, fmt.Sprintf("%s %.0f", n, r.RSSMiBMax[n]))
	}
	_, err := fmt.Fprintf(w, `calls %d in %d turns (%d waited for a slot), %d kills
checks        lost %d  duplicates %d  order violations %d  side effects twice %d  incomplete turns %d  orphan writes %d
outcome unknown %d; slowest turn %s took %.0f ms
recovery      %d calls left by killed executors: p50 %.0f ms  p99 %.0f ms  max %.0f ms (bound %.0f)
              with the turn's earlier calls' runs after the kill: p50 %.0f ms  p99 %.0f ms  max %.0f ms
              %d more left by an executor killed during the node's failover: p50 %.0f ms  max %.0f ms
node          every turn in flight progressed %.0f ms after the node's kill (bound %.0f; slowest %s);
              the cluster elected its last new leader %.0f ms after the kill
malformed     %d sent, %d dead-lettered (%d dead letters in all)
max RSS MiB   %s
`, r.Calls, r.Turns, r.Waited, r.Kills, r.Lost, r.Duplicates, r.OrderViolations, r.SideEffectsTwice, r.GoodTurnsIncomplete, r.OrphanWrites,
		r.OutcomeUnknown, r.Slowest, r.SlowestMS, r.Recovered, r.RecoveryMS.P50, r.RecoveryMS.P99, r.RecoveryMS.Max, ms(r.Bounds[0]),
		r.RecoveryWithWaitMS.P50, r.RecoveryWithWaitMS.P99, r.RecoveryWithWaitMS.Max, r.FailoverCalls, r.DuringFailover.P50, r.DuringFailover.Max,
		r.NodeRecoveryMS, ms(r.Bounds[1]), r.SlowestAfterNode, r.ElectionMS, r.MalformedSent, r.DeadLetters, r.DeadLettersAll, strings.Join(rss, ", "))
	if err != nil {
		return err
	}
	for _, p := range r.Problems() {
		if _, err := fmt.Fprintf(w, "FAILED: %s\n", p); err != nil {
			return err
		}
	}
	if len(r.Undead) > 0 {
		if _, err := fmt.Fprintf(w, "malformed events without a dead letter, by kind: %v\n", r.Undead); err != nil {
			return err
		}
	}
	if r.SlowestRecovery != "" {
		if _, err := fmt.Fprintf(w, "the slowest recovery from an executor's kill (ms from the kill): %s", r.SlowestRecovery); err != nil {
			return err
		}
	}
	if r.SlowestTimeline != "" {
		if _, err := fmt.Fprintf(w, "the slowest turn after the node's kill (ms from the kill):\n%s", r.SlowestTimeline); err != nil {
			return err
		}
	}
	for _, o := range r.OtherDeadLetters {
		if _, err := fmt.Fprintf(w, "dead letter of a good turn: %s\n", o); err != nil {
			return err
		}
	}
	if len(r.Incomplete) > 0 {
		if _, err := fmt.Fprintf(w, "incomplete turns include %s\n(the first: %s)\n", strings.Join(r.Incomplete, " "), r.Diagnosis); err != nil {
			return err
		}
	}
	if r.Dir != "" {
		_, err = fmt.Fprintf(w, "logs and ledger kept in %s\n", r.Dir)
	}
	return err
}
