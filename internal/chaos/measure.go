package chaos

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// settleFor bounds how long the audit waits for a turn_done the client
// has seen to be stored. A subscriber receives an append as it is
// published; when the stream's leader dies before it stores it, the
// reorder appends it again, a moment later.
const settleFor = 30 * time.Second

// settledAudit audits the out stream, again while a turn the client saw
// done has no turn_done stored yet (for at most settleFor).
func settledAudit(ctx context.Context, r *run, calls map[string]int, seenDone map[string]bool) (map[string]*stored, error) {
	deadline := time.Now().Add(settleFor)
	for {
		out, err := audit(ctx, r.js, r.sp, calls)
		if err != nil {
			return nil, err
		}
		pending := 0
		for id, seen := range seenDone {
			if s := out[id]; seen && (s == nil || !s.done) {
				pending++
			}
		}
		if pending == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return out, nil
		}
		time.Sleep(time.Second)
	}
}

// report audits the streams and the ledger and measures the recoveries.
func (r *run) report(ctx context.Context, sent int) (*Report, error) {
	rep := &Report{MalformedSent: sent, RSSMiBMax: map[string]float64{}, Bounds: [2]time.Duration{r.cfg.MaxRecovery, r.cfg.MaxNodeRecovery}}
	end := time.Now()
	calls := map[string]int{} // the run's turns and their calls
	seenDone := map[string]bool{}
	r.obs.mu.Lock()
	for id, t := range r.obs.turns {
		calls[id] = t.calls
		seenDone[id] = !t.done.IsZero()
	}
	r.obs.mu.Unlock()
	out, err := settledAudit(ctx, r, calls, seenDone)
	if err != nil {
		return nil, err
	}
	r.obs.mu.Lock()
	for id, t := range r.obs.turns {
		rep.Turns++
		rep.Calls += t.calls
		s := out[id]
		if s == nil {
			s = &stored{}
		}
		if t.done.IsZero() || !s.done {
			// Complete means turn_done stored, and read by the client.
			rep.GoodTurnsIncomplete++
			if len(rep.Incomplete) < 5 {
				rep.Incomplete = append(rep.Incomplete, id)
			}
		} else if d := ms(t.done.Sub(t.started)); d > rep.SlowestMS {
			rep.Slowest, rep.SlowestMS = id, d
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
	for _, c := range r.obs.calls {
		if c.unknown {
			rep.OutcomeUnknown++
		}
	}
	r.obs.mu.Unlock()
	if err := r.awaitDeadLetters(ctx, rep); err != nil {
		return nil, err
	}
	if rep.Revived, rep.RevivedSome, err = revived(ctx, r.js, r.sp, calls); err != nil {
		return nil, fmt.Errorf("chaos: read the leases: %w", err)
	}
	if err := r.ledger(rep); err != nil {
		return nil, err
	}
	var recoveries, withWait, failover []float64
	slowest := 0.0
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
				continue
			}
			withWait = append(withWait, ms(t.Sub(k.at)))
			d := ms(t.Sub(k.at) - r.obs.waitedForEarlier(c, k.pid, k.at, t))
			recoveries = append(recoveries, d)
			if d > slowest {
				slowest = d
				rep.SlowestRecovery = fmt.Sprintf("%s call %d, from executor pid %d's kill:\n%s", c.turn, c.seq, k.pid, r.obs.timeline(c.turn, k.at))
			}
		}
	}
	rep.Recovered, rep.FailoverCalls = len(recoveries), len(failover)
	rep.RecoveryMS, rep.RecoveryWithWaitMS, rep.DuringFailover = summarize(recoveries), summarize(withWait), summarize(failover)
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
		if err := r.obs.submitErr(rep.Incomplete[0]); err != nil {
			rep.Diagnosis += "; its submit failed: " + err.Error()
		}
	}
	if rep.GoodTurnsIncomplete > 0 {
		// What the stages were waiting for, in their logs.
		for _, p := range r.top.all()[3:] {
			p.dump()
		}
	}
	return rep, nil
}

// awaitDeadLetters counts the malformed events' dead letters. They are
// written as the router gets to them: the count in the stream is watched
// (one request a second) for up to 30 s until it reaches what was sent, and
// the letters are read then — again only should some be copies.
func (r *run) awaitDeadLetters(ctx context.Context, rep *Report) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := r.js.Stream(ctx, r.sp.DLQStream())
		if err != nil {
			return fmt.Errorf("chaos: the dead letters: %w", err)
		}
		info, err := st.Info(ctx)
		last := time.Now().After(deadline)
		if err == nil && int(info.State.Msgs) >= rep.MalformedSent || last {
			seen := map[int]bool{}
			if rep.DeadLetters, rep.DeadLettersAll, rep.OtherDeadLetters, err = deadLetters(ctx, r.js, r.sp, seen); err != nil {
				return err
			}
			rep.Undead = map[string]int{}
			for i := range rep.MalformedSent {
				if !seen[i] {
					rep.Undead[badKind(i)]++
				}
			}
			if rep.DeadLetters >= rep.MalformedSent || last {
				return nil
			}
		}
		time.Sleep(time.Second)
	}
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
