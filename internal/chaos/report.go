package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
              %d more left by an executor killed during the node's failover: p50 %.0f ms  max %.0f ms
node          every turn in flight progressed %.0f ms after the node's kill (bound %.0f; slowest %s);
              the cluster elected its last new leader %.0f ms after the kill
malformed     %d sent, %d dead-lettered (%d dead letters in all)
max RSS MiB   %s
`, r.Calls, r.Turns, r.Waited, r.Kills, r.Lost, r.Duplicates, r.OrderViolations, r.SideEffectsTwice, r.GoodTurnsIncomplete, r.OrphanWrites,
		r.OutcomeUnknown, r.Slowest, r.SlowestMS, r.Recovered, r.RecoveryMS.P50, r.RecoveryMS.P99, r.RecoveryMS.Max, ms(r.Bounds[0]),
		r.FailoverCalls, r.DuringFailover.P50, r.DuringFailover.Max,
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

// report audits the streams and the ledger and measures the recoveries.
func (r *run) report(ctx context.Context, start time.Time, sent int) (*Report, error) {
	rep := &Report{MalformedSent: sent, RSSMiBMax: map[string]float64{}, Bounds: [2]time.Duration{r.cfg.MaxRecovery, r.cfg.MaxNodeRecovery}}
	end := time.Now()
	r.obs.mu.Lock()
	ours := map[string]bool{}
	for id, t := range r.obs.turns {
		ours[id] = true
		rep.Turns++
		rep.Calls += t.calls
		if d := ms(t.done.Sub(t.started)); !t.done.IsZero() && d > rep.SlowestMS {
			rep.Slowest, rep.SlowestMS = id, d
		}
		if t.done.IsZero() {
			rep.GoodTurnsIncomplete++
			if len(rep.Incomplete) < 5 {
				rep.Incomplete = append(rep.Incomplete, id)
			}
		}
	}
	for _, c := range r.obs.calls {
		if c.unknown {
			rep.OutcomeUnknown++
		}
	}
	r.obs.mu.Unlock()
	out, err := audit(ctx, r.js, r.sp, ours)
	if err != nil {
		return nil, err
	}
	r.obs.mu.Lock()
	for id, t := range r.obs.turns {
		s := out[id]
		if s == nil {
			s = &stored{}
		}
		seen := map[int]bool{}
		for _, q := range s.seqs {
			if seen[q] {
				rep.Duplicates++
				continue
			}
			if q != len(seen) {
				rep.OrderViolations++
			}
			seen[q] = true
		}
		for q := range t.calls {
			if !seen[q] {
				rep.Lost++
			}
		}
	}
	r.obs.mu.Unlock()
	// Dead letters are written as the router gets to them; wait for the
	// last ones a while.
	deadline := time.Now().Add(30 * time.Second)
	for {
		seen := map[int]bool{}
		if rep.DeadLetters, rep.DeadLettersAll, rep.OtherDeadLetters, err = deadLetters(ctx, r.js, r.sp, seen); err != nil {
			return nil, err
		}
		rep.Undead = map[string]int{}
		for i := range sent {
			if !seen[i] {
				rep.Undead[badKind(i)]++
			}
		}
		if rep.DeadLetters >= sent || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	calls := map[string]int{}
	r.obs.mu.Lock()
	for id, t := range r.obs.turns {
		calls[id] = t.calls
	}
	r.obs.mu.Unlock()
	if rep.Revived, rep.RevivedSome, err = revived(ctx, r.js, r.sp, calls); err != nil {
		return nil, fmt.Errorf("chaos: read the leases: %w", err)
	}
	if err := r.ledger(rep); err != nil {
		return nil, err
	}
	var recoveries, failover []float64
	for _, k := range r.kills {
		rep.Kills++
		during := false
		for _, nk := range r.nodeKills {
			during = during || !k.at.Before(nk.at) && k.at.Sub(nk.at) < failoverWindow
		}
		for _, c := range k.calls {
			t := r.obs.recovered(c, k.pid, k.at)
			if t.IsZero() {
				t = end
			}
			if during {
				failover = append(failover, ms(t.Sub(k.at)))
			} else {
				recoveries = append(recoveries, ms(t.Sub(k.at)))
			}
		}
	}
	rep.Recovered, rep.FailoverCalls = len(recoveries), len(failover)
	rep.RecoveryMS, rep.DuringFailover = summarize(recoveries), summarize(failover)
	for _, nk := range r.nodeKills {
		if e := r.top.lastElection(nk.at, 60*time.Second); !e.IsZero() {
			rep.ElectionMS = max(rep.ElectionMS, ms(e.Sub(nk.at)))
		}
		for _, turn := range nk.turns {
			t := r.obs.progressed(turn, nk.at)
			if t.IsZero() {
				t = end
			}
			if d := ms(t.Sub(nk.at)); d > rep.NodeRecoveryMS {
				rep.NodeRecoveryMS, rep.SlowestAfterNode = d, turn
				rep.SlowestTimeline = r.obs.timeline(turn, nk.at)
			}
		}
	}
	for _, p := range r.top.all() {
		rep.RSSMiBMax[p.name] = math.Round(p.peakMiB*10) / 10
		if p.died() {
			rep.Exited = append(rep.Exited, p.name)
		}
	}
	if len(rep.Incomplete) > 0 {
		rep.Diagnosis = diagnose(ctx, r.js, r.sp, rep.Incomplete[0])
	}
	if rep.GoodTurnsIncomplete > 0 {
		// What the stages were waiting for, in their logs.
		for _, p := range r.top.all()[3:] {
			p.dump()
		}
	}
	return rep, nil
}

// ledger reads the side-effect ledger: a call's line twice means its
// command ran twice; a line written after its call was answered "outcome
// unknown" means a dead worker's command lived on.
func (r *run) ledger(rep *Report) error {
	f, err := os.Open(filepath.Join(r.dir, "work", "ledger"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	count := map[string]int{}
	sc := bufio.NewScanner(f)
	r.obs.mu.Lock()
	defer r.obs.mu.Unlock()
	for sc.Scan() {
		name, stamp, _ := strings.Cut(sc.Text(), " ")
		count[name]++
		if count[name] == 2 {
			rep.SideEffectsTwice++
		}
		dot := strings.LastIndexByte(name, '.')
		seq, err := strconv.Atoi(name[dot+1:])
		if dot < 0 || err != nil {
			continue
		}
		c := r.obs.calls[callKey{name[:dot], seq}]
		sec, err := strconv.ParseFloat(stamp, 64)
		if c != nil && c.unknown && err == nil && time.Unix(0, int64(sec*1e9)).After(c.answered) {
			rep.OrphanWrites++
		}
	}
	return sc.Err()
}

func summarize(v []float64) Summary {
	if len(v) == 0 {
		return Summary{}
	}
	slices.Sort(v)
	at := func(q float64) float64 { return math.Round(v[min(len(v)-1, int(q*float64(len(v))))]) }
	return Summary{P50: at(0.5), P99: at(0.99), Max: math.Round(v[len(v)-1])}
}
