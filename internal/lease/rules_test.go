package lease_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/schemas"
)

// mkLease builds a lease from a compact description: one token per call,
// separated by spaces. A token is a state letter (u unknown, o routed,
// r ready, R running, d done) followed by s (safe) or x (not safe), e.g.
// "ds rx Rs" is a done safe call, a ready unsafe call, a running safe call.
func mkLease(max int, desc string) *schemas.Lease {
	l := &schemas.Lease{MaxConcurrency: max, Total: -1}
	for _, tok := range strings.Fields(desc) {
		if len(tok) != 2 {
			panic("bad token " + tok)
		}
		var c schemas.LeaseCall
		switch tok[0] {
		case 'u':
			c.State = schemas.CallUnknown
		case 'o':
			c.State = schemas.CallRouted
		case 'r':
			c.State = schemas.CallReady
		case 'R':
			c.State = schemas.CallRunning
		case 'd':
			c.State = schemas.CallDone
		default:
			panic("bad state in " + tok)
		}
		switch tok[1] {
		case 's':
			c.Safe = true
		case 'x':
		default:
			panic("bad safe flag in " + tok)
		}
		c.Seq = len(l.Calls)
		l.Calls = append(l.Calls, c)
	}
	return l
}

// nTokens returns n copies of tok, space-separated.
func nTokens(n int, tok string) string {
	return strings.TrimSpace(strings.Repeat(tok+" ", n))
}

func TestCanStartTable(t *testing.T) {
	cases := []struct {
		name string
		max  int
		desc string
		seq  int
		want bool
	}{
		// A call that is not in state ready never starts.
		{"first ready safe", 0, "rs", 0, true},
		{"first ready unsafe", 0, "rx", 0, true},
		{"unknown never starts", 0, "us", 0, false},
		{"routed never starts", 0, "os", 0, false},
		{"routed unsafe never starts", 0, "ox", 0, false},
		{"running does not start again", 0, "Rs", 0, false},
		{"running unsafe does not start again", 0, "Rx", 0, false},
		{"done does not start again", 0, "ds", 0, false},
		{"seq past the end", 0, "rs", 1, false},
		{"seq on empty lease", 0, "", 0, false},
		{"seq far past the end", 0, "rs rs", 7, false},

		// Every earlier call must be classified (state >= ready).
		{"safe after unknown", 0, "us rs", 1, false},
		{"safe after routed safe-flagged", 0, "os rs", 1, false},
		{"safe after routed unsafe-flagged", 0, "ox rs", 1, false},
		{"unsafe after routed", 0, "os rx", 1, false},
		{"safe after ready safe then unknown", 0, "rs us rs", 2, false},
		{"unclassified later call does not block", 0, "rs us", 0, true},
		{"unclassified later call does not block unsafe", 0, "rx os", 0, true},

		// Safe: waits for every earlier unsafe call to finish.
		{"safe after ready unsafe", 0, "rx rs", 1, false},
		{"safe after running unsafe", 0, "Rx rs", 1, false},
		{"safe after done unsafe", 0, "dx rs", 1, true},
		{"safe after ready safe", 0, "rs rs", 1, true},
		{"safe after running safe", 0, "Rs rs", 1, true},
		{"safe after done safe", 0, "ds rs", 1, true},
		{"safe after safe batch then ready unsafe", 0, "Rs Rs rx rs", 3, false},
		{"safe never overtakes waiting unsafe", 0, "ds rx rs", 2, false},
		{"safe after many done unsafe and running safe", 0, "dx dx Rs dx rs", 4, true},
		{"later unsafe does not block safe", 0, "rs rx", 0, true},
		{"later running unsafe blocks safe only via the count", 5, "rs Rx", 0, true},

		// Safe: fewer than MaxConcurrency running (all calls of the turn).
		{"max 1 with one running", 1, "Rs rs", 1, false},
		{"max 2 with one running", 2, "Rs rs", 1, true},
		{"max 2 with two running", 2, "Rs Rs rs", 2, false},
		{"max 2 counts later running calls", 2, "rs Rs Rs", 0, false},
		{"max 3 counts later running calls", 3, "rs Rs Rs", 0, true},
		{"max 1 nothing running", 1, "ds rs", 1, true},
		{"ready and done calls are not running", 1, "ds rs rs", 2, true},
		{"default 10: 9 running", 0, nTokens(9, "Rs") + " rs", 9, true},
		{"default 10: 10 running", 0, nTokens(10, "Rs") + " rs", 10, false},
		{"default 10: 11 running", 0, nTokens(11, "Rs") + " rs", 11, false},
		{"negative max is default: 9 running", -3, nTokens(9, "Rs") + " rs", 9, true},
		{"negative max is default: 10 running", -1, nTokens(10, "Rs") + " rs", 10, false},
		{"max 12: 10 running", 12, nTokens(10, "Rs") + " rs", 10, true},
		{"max 12: 12 running", 12, nTokens(12, "Rs") + " rs", 12, false},

		// Unsafe: waits for every earlier call, safe or not.
		{"unsafe after ready safe", 0, "rs rx", 1, false},
		{"unsafe after running safe", 0, "Rs rx", 1, false},
		{"unsafe after ready unsafe", 0, "rx rx", 1, false},
		{"unsafe after running unsafe", 0, "Rx rx", 1, false},
		{"unsafe after done calls", 0, "ds dx ds rx", 3, true},
		{"unsafe after done calls but one running", 0, "ds Rs ds rx", 3, false},
		{"unsafe is not subject to MaxConcurrency of earlier calls", 1, "ds dx rx", 2, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := mkLease(tc.max, tc.desc)
			if got := lease.CanStart(l, tc.seq); got != tc.want {
				t.Errorf("CanStart(%q max=%d, %d) = %v, want %v", tc.desc, tc.max, tc.seq, got, tc.want)
			}
			if got := refCanStart(l, tc.seq); got != tc.want {
				t.Errorf("reference disagrees with the table: refCanStart(%q max=%d, %d) = %v", tc.desc, tc.max, tc.seq, got)
			}
		})
	}
}

// TestCanStartDoesNotModify checks that CanStart is a pure read.
func TestCanStartDoesNotModify(t *testing.T) {
	l := mkLease(2, "ds Rs rs rx os")
	before := fmt.Sprintf("%+v", *l)
	for seq := range 6 {
		lease.CanStart(l, seq)
	}
	if after := fmt.Sprintf("%+v", *l); after != before {
		t.Fatalf("CanStart changed the lease:\n before %s\n after  %s", before, after)
	}
}

// refCanStart is an independent, literal reading of the start rule in
// docs/orchestration.md:
// call i may start when it is ready and
//   - every call before it has been classified;
//   - if i is safe: every unsafe call before it has finished, and fewer than
//     max_concurrency (default 10) calls of the turn are running;
//   - if i is not safe: every call before it has finished.
func refCanStart(l *schemas.Lease, i int) bool {
	if i < 0 || i >= len(l.Calls) {
		return false
	}
	if l.Calls[i].State != schemas.CallReady {
		return false
	}
	classified := func(c schemas.LeaseCall) bool {
		return c.State == schemas.CallReady || c.State == schemas.CallRunning || c.State == schemas.CallDone
	}
	finished := func(c schemas.LeaseCall) bool { return c.State == schemas.CallDone }

	earlier := l.Calls[:i]
	for _, c := range earlier {
		if !classified(c) {
			return false
		}
	}
	if !l.Calls[i].Safe {
		for _, c := range earlier {
			if !finished(c) {
				return false
			}
		}
		return true
	}
	for _, c := range earlier {
		if !c.Safe && !finished(c) {
			return false
		}
	}
	limit := 10
	if l.MaxConcurrency > 0 {
		limit = l.MaxConcurrency
	}
	running := 0
	for _, c := range l.Calls {
		if c.State == schemas.CallRunning {
			running++
		}
	}
	return running < limit
}

func TestCanStartMatchesReference(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	iterations := 200000
	if testing.Short() {
		iterations = 20000
	}
	states := []schemas.CallState{schemas.CallUnknown, schemas.CallRouted, schemas.CallReady, schemas.CallRunning, schemas.CallDone}
	trues := 0
	for it := 0; it < iterations; it++ {
		n := r.IntN(16)
		l := &schemas.Lease{MaxConcurrency: r.IntN(16) - 3, Total: -1}
		// Bias some leases towards "mostly done/running" so that the true
		// branch is exercised often, not just the early returns.
		doneBias := r.IntN(3)
		for j := 0; j < n; j++ {
			var c schemas.LeaseCall
			switch {
			case doneBias == 1 && r.IntN(3) > 0:
				c.State = schemas.CallDone
			case doneBias == 2 && r.IntN(2) == 0:
				c.State = states[2+r.IntN(3)]
			default:
				c.State = states[r.IntN(len(states))]
			}
			c.Safe = r.IntN(3) > 0
			c.Seq = len(l.Calls)
			l.Calls = append(l.Calls, c)
		}
		for seq := 0; seq <= n+1; seq++ {
			got, want := lease.CanStart(l, seq), refCanStart(l, seq)
			if got != want {
				t.Fatalf("seed %d iteration %d: CanStart(seq=%d) = %v, reference %v\nlease: max=%d %s",
					seed, it, seq, got, want, l.MaxConcurrency, describe(l))
			}
			if got {
				trues++
			}
		}
	}
	if trues < iterations/20 {
		t.Fatalf("the generator rarely produced startable calls (%d of %d leases): property test too weak", trues, iterations)
	}
}

// TestCanStartBatchesProperty checks the consequences docs/orchestration.md
// draws from the rule on random leases: a safe call never overtakes a
// waiting unsafe one, and an unsafe call that may start has nothing before
// it that is not done.
func TestCanStartBatchesProperty(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0xba7c4))
	for it := 0; it < 50000; it++ {
		n := 1 + r.IntN(12)
		l := &schemas.Lease{MaxConcurrency: r.IntN(6), Total: -1}
		for j := 0; j < n; j++ {
			l.Calls = append(l.Calls, schemas.LeaseCall{Seq: len(l.Calls),
				State: schemas.CallState(2 + r.IntN(3)),
				Safe:  r.IntN(2) == 0,
			})
		}
		for seq := 0; seq < n; seq++ {
			if !lease.CanStart(l, seq) {
				continue
			}
			for j := 0; j < seq; j++ {
				c := l.Calls[j]
				if !l.Calls[seq].Safe && c.State != schemas.CallDone {
					t.Fatalf("seed %d: unsafe call %d may start while call %d is %v: %s", seed, seq, j, c.State, describe(l))
				}
				if !c.Safe && c.State != schemas.CallDone {
					t.Fatalf("seed %d: call %d overtakes unsafe call %d (%v): %s", seed, seq, j, c.State, describe(l))
				}
			}
			if l.Calls[seq].Safe {
				limit := l.MaxConcurrency
				if limit <= 0 {
					limit = lease.DefaultMaxConcurrency
				}
				if lease.Running(l) >= limit {
					t.Fatalf("seed %d: safe call %d may start with %d running (max %d): %s", seed, seq, lease.Running(l), limit, describe(l))
				}
			}
		}
	}
}

func describe(l *schemas.Lease) string {
	var b strings.Builder
	for i, c := range l.Calls {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%v", i, c.State)
		if c.Safe {
			b.WriteString("/safe")
		} else {
			b.WriteString("/unsafe")
		}
	}
	return "[" + b.String() + "]"
}

func TestDefaultMaxConcurrency(t *testing.T) {
	if lease.DefaultMaxConcurrency != 10 {
		t.Fatalf("DefaultMaxConcurrency = %d, docs/orchestration.md says 10", lease.DefaultMaxConcurrency)
	}
}

func TestRunning(t *testing.T) {
	cases := []struct {
		desc string
		want int
	}{
		{"", 0},
		{"rs rx ds dx us os", 0},
		{"Rs", 1},
		{"Rs Rx rs Rs ds", 3},
	}
	for _, tc := range cases {
		if got := lease.Running(mkLease(0, tc.desc)); got != tc.want {
			t.Errorf("Running(%q) = %d, want %d", tc.desc, got, tc.want)
		}
	}
}

func TestComplete(t *testing.T) {
	withTotal := func(total int, desc string) *schemas.Lease {
		l := mkLease(0, desc)
		l.Total = total
		return l
	}
	cases := []struct {
		name string
		l    *schemas.Lease
		want bool
	}{
		{"end unknown, no calls", withTotal(-1, ""), false},
		{"end unknown, all done", withTotal(-1, "ds dx"), false},
		{"empty turn", withTotal(0, ""), true},
		{"all done", withTotal(3, "ds dx ds"), true},
		{"one running", withTotal(3, "ds Rx ds"), false},
		{"one ready", withTotal(3, "ds dx rs"), false},
		{"one routed", withTotal(2, "os ds"), false},
		{"one unknown slot", withTotal(2, "ds us"), false},
		{"fewer calls than total", withTotal(3, "ds dx"), false},
		{"no calls yet but total known", withTotal(2, ""), false},
		{"fresh lease", schemas.NewLease(4, time.Now()), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := lease.Complete(tc.l); got != tc.want {
				t.Errorf("Complete(total=%d %s) = %v, want %v", tc.l.Total, describe(tc.l), got, tc.want)
			}
		})
	}
}
