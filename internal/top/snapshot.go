package top

import (
	"cmp"
	"slices"
	"time"

	"github.com/toolwire/toolwire/schemas"
)

// Options shape a snapshot.
type Options struct {
	// Turns bounds the turns listed (0: DefaultTurns): those in flight,
	// oldest first, then the finished ones, newest first.
	Turns int
	// Now is the snapshot's time (zero: the clock's).
	Now time.Time
}

// DefaultTurns is how many turns a snapshot lists unless told.
const DefaultTurns = 50

// Snapshot is one view of the fleet; its JSON form is what `toolwire top
// --once --json` prints.
type Snapshot struct {
	At time.Time `json:"at"`
	// TurnsInFlight counts the turns with a call not answered yet, or no
	// end yet; TurnsFinished those whose every call is answered.
	TurnsInFlight int `json:"turns_in_flight"`
	TurnsFinished int `json:"turns_finished"`
	// Calls adds up the calls of the turns in flight by state.
	Calls CallCounts `json:"calls"`
	// Turns are the turns listed (Options.Turns), TurnsLeftOut how many
	// more there are.
	Turns        []Turn `json:"turns"`
	TurnsLeftOut int    `json:"turns_left_out"`
	// Running are the calls running now, by worker and tool.
	Running []Running `json:"running"`
	// Consumers are the stages' durable consumers and their backlog.
	Consumers []Consumer `json:"consumers"`
	// DeadLetters is how many dead letters the DLQ stream holds.
	DeadLetters uint64 `json:"dead_letters"`
	// ApprovalsWaiting counts approval requests of calls not answered yet.
	ApprovalsWaiting int `json:"approvals_waiting"`

	open map[string]map[int]bool // unanswered calls by lease key, for the approvals
}

// CallCounts counts calls by state.
type CallCounts struct {
	// Waiting are routed or classified and not started.
	Waiting int `json:"waiting"`
	Running int `json:"running"`
	Done    int `json:"done"`
}

// Turn is one turn as its lease has it.
type Turn struct {
	Tenant string `json:"tenant"`
	Turn   string `json:"turn"`
	// Total is the turn's number of calls, -1 until its end is known.
	Total int `json:"total"`
	CallCounts
	// Finished: every call the turn counts is answered.
	Finished  bool  `json:"finished"`
	Cancelled bool  `json:"cancelled,omitempty"`
	Discarded bool  `json:"discarded,omitempty"`
	Aborted   bool  `json:"aborted,omitempty"`
	AgeMs     int64 `json:"age_ms"`

	created int64
}

// Running is how many calls of one tool run on one worker.
type Running struct {
	Worker string `json:"worker"`
	Tool   string `json:"tool"`
	Calls  int    `json:"calls"`
}

// Consumer is one stage consumer's backlog.
type Consumer struct {
	Stage    string `json:"stage"`
	Stream   string `json:"stream"`
	Consumer string `json:"consumer"`
	// Pending are messages not delivered yet (the lag), AckPending those
	// delivered and not acknowledged (being worked on).
	Pending     uint64 `json:"pending"`
	AckPending  int    `json:"ack_pending"`
	Redelivered int    `json:"redelivered"`
	Waiting     int    `json:"waiting_pulls"`
}

// summarize counts the leases.
func summarize(leases map[string]*schemas.Lease, o Options) *Snapshot {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Turns <= 0 {
		o.Turns = DefaultTurns
	}
	s := &Snapshot{At: o.Now.UTC(), open: map[string]map[int]bool{}, Turns: []Turn{}, Running: []Running{}}
	running := map[Running]int{}
	var inFlight, finished []Turn
	for key, l := range leases {
		tenant, turn := splitKey(key)
		t := Turn{Tenant: tenant, Turn: turn, Total: l.Total, Cancelled: l.Cancelled, Discarded: l.Discarded, Aborted: l.Abort != nil, created: l.Created}
		if l.Created > 0 {
			t.AgeMs = o.Now.UnixMilli() - l.Created
		}
		open := map[int]bool{}
		for _, c := range l.Calls {
			switch c.State {
			case schemas.CallDone:
				t.Done++
				continue
			case schemas.CallRunning:
				t.Running++
				running[Running{Worker: c.Worker, Tool: c.Tool}]++
			default:
				t.Waiting++
			}
			open[c.Seq] = true
		}
		t.Finished = l.Total >= 0 && t.Done >= l.Total && len(open) == 0
		if t.Finished {
			finished = append(finished, t)
			continue
		}
		s.open[key] = open
		s.Calls.Waiting += t.Waiting
		s.Calls.Running += t.Running
		s.Calls.Done += t.Done
		inFlight = append(inFlight, t)
	}
	s.TurnsInFlight, s.TurnsFinished = len(inFlight), len(finished)
	slices.SortFunc(inFlight, func(a, b Turn) int { return cmp.Or(cmp.Compare(a.created, b.created), cmp.Compare(a.Turn, b.Turn)) })
	slices.SortFunc(finished, func(a, b Turn) int { return cmp.Or(cmp.Compare(b.created, a.created), cmp.Compare(a.Turn, b.Turn)) })
	all := append(inFlight, finished...)
	s.Turns = append(s.Turns, all[:min(len(all), o.Turns)]...)
	s.TurnsLeftOut = len(all) - len(s.Turns)
	for r, n := range running {
		r.Calls = n
		s.Running = append(s.Running, r)
	}
	slices.SortFunc(s.Running, func(a, b Running) int {
		return cmp.Or(cmp.Compare(a.Worker, b.Worker), cmp.Compare(a.Tool, b.Tool))
	})
	return s
}
