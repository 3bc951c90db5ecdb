package chaos

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/schemas"
)

// callKey names a call of the run.
type callKey struct {
	turn string
	seq  int
}

// mark is a change of a call's entry in its turn's lease, as the lease
// bucket republished it.
type mark struct {
	at     time.Time
	state  schemas.CallState
	worker string
}

// callObs is what the run saw of one call.
type callObs struct {
	marks []mark
	// safe is the lease's word on the call: whether it may run beside
	// the calls before it that are safe too.
	safe     bool
	answered time.Time
	unknown  bool
}

// turnObs is what the run saw of one turn.
type turnObs struct {
	started time.Time
	calls   int
	events  []time.Time
	seen    map[int]int
	order   int
	done    time.Time
	// submitErr is why the client's submit of the turn failed, if it did.
	submitErr error
}

// observer keeps what the run saw: each turn's deliveries, as the client
// got them, and each call's lease entries, as the pipeline wrote them.
type observer struct {
	mu sync.Mutex
	// done are the turns that completed, in order.
	done     []string
	versions map[string]uint64
	calls    map[callKey]*callObs
	turns    map[string]*turnObs
}

func newObserver() *observer {
	return &observer{versions: map[string]uint64{}, calls: map[callKey]*callObs{}, turns: map[string]*turnObs{}}
}

func (o *observer) call(k callKey) *callObs {
	c := o.calls[k]
	if c == nil {
		c = &callObs{}
		o.calls[k] = c
	}
	return c
}

// lease records a republished lease write: the calls whose state or worker
// changed get a mark. Writes can arrive out of order; an older version
// than one seen is dropped.
func (o *observer) lease(m *nats.Msg) {
	at := time.Now()
	i := strings.LastIndexByte(m.Subject, '.')
	if i < 0 || len(m.Data) == 0 {
		return
	}
	turn := m.Subject[i+1:]
	l, err := schemas.DecodeLease(m.Data)
	if err != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ours := o.turns[turn]; !ours || l.Version <= o.versions[turn] {
		return
	}
	o.versions[turn] = l.Version
	for _, lc := range l.Calls {
		c := o.call(callKey{turn, lc.Seq})
		c.safe = lc.Safe
		if n := len(c.marks); n > 0 && c.marks[n-1].state == lc.State && c.marks[n-1].worker == lc.Worker {
			continue
		}
		c.marks = append(c.marks, mark{at: at, state: lc.State, worker: lc.Worker})
	}
}

func (o *observer) begin(turn string, calls int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.turns[turn] = &turnObs{started: time.Now(), calls: calls, seen: map[int]int{}}
}

// refused records that the client's submit of turn failed with err.
func (o *observer) refused(turn string, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if t := o.turns[turn]; t != nil {
		t.submitErr = err
	}
}

// submitErr is why turn's submit failed, nil when it did not.
func (o *observer) submitErr(turn string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if t := o.turns[turn]; t != nil {
		return t.submitErr
	}
	return nil
}

// deliver records a result the client received.
func (o *observer) deliver(turn string, r *schemas.ToolResult, at time.Time, unknown bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	t := o.turns[turn]
	t.events = append(t.events, at)
	if r.Seq > len(t.seen) {
		t.order++
	}
	t.seen[r.Seq]++
	c := o.call(callKey{turn, r.Seq})
	if c.answered.IsZero() {
		c.answered, c.unknown = at, unknown
	}
}

func (o *observer) finish(turn string, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	t := o.turns[turn]
	t.events = append(t.events, at)
	t.done = at
	o.done = append(o.done, turn)
}

// onWorker is a kill's snapshot: the calls that were running on the
// killed worker, and the unanswered calls of their turns that were not
// running (parked behind them), each of which must be started again or
// answered.
func (o *observer) onWorker(pid int) []callKey {
	tag := workerTag(pid)
	o.mu.Lock()
	defer o.mu.Unlock()
	hit := map[string]bool{}
	var keys []callKey
	for k, c := range o.calls {
		if w, ok := c.runningOn(); ok && strings.Contains(w, tag) && c.answered.IsZero() {
			keys = append(keys, k)
			hit[k.turn] = true
		}
	}
	for turn := range hit {
		for seq := range o.turns[turn].calls {
			k := callKey{turn, seq}
			c := o.calls[k]
			if c == nil {
				keys = append(keys, k)
			} else if _, running := c.runningOn(); !running && c.answered.IsZero() {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// runningOn is the worker the lease last showed running the call, if it
// did.
func (c *callObs) runningOn() (string, bool) {
	n := len(c.marks)
	if n == 0 || c.marks[n-1].state != schemas.CallRunning {
		return "", false
	}
	return c.marks[n-1].worker, true
}

// workerTag is what a worker id of the process pid holds ("…-<pid>-…").
func workerTag(pid int) string { return "-" + strconv.Itoa(pid) + "-" }

// recovered is when call k was started by another worker than the killed
// one, or answered, after at; zero when neither happened.
func (o *observer) recovered(k callKey, pid int, at time.Time) time.Time {
	tag := workerTag(pid)
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.calls[k]
	if c == nil {
		return time.Time{}
	}
	end := c.answered
	for _, m := range c.marks {
		if m.at.Before(at) {
			continue
		}
		if m.state == schemas.CallDone || m.state == schemas.CallRunning && !strings.Contains(m.worker, tag) {
			if end.IsZero() || m.at.Before(end) {
				end = m.at
			}
			break
		}
	}
	return end
}

// waitedForEarlier is how long, between from and to, calls of k's turn
// that it must wait for were running on workers other than the killed one
// (pid), the spans' union: time k would have waited for its turn's order
// had no worker died. A parked call starts only after the calls before it
// that hold it back — all of them for a call with side effects, those
// with side effects for a safe one (lease.CanStart) — have run again;
// their run time is their tools', not the recovery's.
func (o *observer) waitedForEarlier(k callKey, pid int, from, to time.Time) time.Duration {
	tag := workerTag(pid)
	o.mu.Lock()
	defer o.mu.Unlock()
	self := o.calls[k]
	var spans [][2]time.Time
	for seq := range k.seq {
		c := o.calls[callKey{k.turn, seq}]
		if c == nil || self != nil && self.safe && c.safe {
			continue
		}
		for i, m := range c.marks {
			if m.state != schemas.CallRunning || strings.Contains(m.worker, tag) {
				continue
			}
			start, end := m.at, to
			if i+1 < len(c.marks) && c.marks[i+1].at.Before(end) {
				end = c.marks[i+1].at
			}
			if start.Before(from) {
				start = from
			}
			if start.Before(end) {
				spans = append(spans, [2]time.Time{start, end})
			}
		}
	}
	slices.SortFunc(spans, func(a, b [2]time.Time) int { return a[0].Compare(b[0]) })
	var total time.Duration
	var reach time.Time
	for _, sp := range spans {
		if sp[0].Before(reach) {
			sp[0] = reach
		}
		if sp[0].Before(sp[1]) {
			total += sp[1].Sub(sp[0])
			reach = sp[1]
		}
	}
	return total
}

// inFlight lists the turns started and not done at at.
func (o *observer) inFlight(at time.Time) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var ids []string
	for id, t := range o.turns {
		if t.started.Before(at) && (t.done.IsZero() || t.done.After(at)) {
			ids = append(ids, id)
		}
	}
	return ids
}

// progressed is the first delivery of turn after at; zero when none.
func (o *observer) progressed(turn string, at time.Time) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range o.turns[turn].events {
		if e.After(at) {
			return e
		}
	}
	return time.Time{}
}

// timeline tells what the run saw of a turn after at, for the report of
// the slowest turn: each call's lease changes and the deliveries, in ms
// from at.
func (o *observer) timeline(turn string, at time.Time) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	t := o.turns[turn]
	if t == nil {
		return ""
	}
	var b strings.Builder
	for seq := range t.calls {
		c := o.calls[callKey{turn, seq}]
		fmt.Fprintf(&b, "call %d:", seq)
		if c == nil {
			b.WriteString(" nothing seen\n")
			continue
		}
		for _, m := range c.marks {
			fmt.Fprintf(&b, " %s@%d", m.state, m.at.Sub(at).Milliseconds())
		}
		if !c.answered.IsZero() {
			fmt.Fprintf(&b, " answered@%d", c.answered.Sub(at).Milliseconds())
		}
		b.WriteString("\n")
	}
	if !t.done.IsZero() {
		fmt.Fprintf(&b, "done@%d\n", t.done.Sub(at).Milliseconds())
	}
	return b.String()
}
