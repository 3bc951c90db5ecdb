package loadtest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/toolwire/toolwire/client"
)

// turnSpec is one synthetic turn: its calls' safe flags.
type turnSpec struct {
	safe []bool
}

// makeTurn draws turn k of the workload; the same seed and k give the same
// turn, so the baseline runs the workload the pipeline ran.
func makeTurn(c Config, k uint64) turnSpec {
	return turnSpec{safe: DrawTurn(c.Seed, k, c.CallsPerTurn, c.SafeShare)}
}

// DrawTurn draws the safe flags of turn k (one per call): a number of
// calls from calls, each safe with probability safeShare. The same seed
// and k give the same turn, so a peer's driver runs exactly synth's turns.
func DrawTurn(seed, k uint64, calls Range, safeShare float64) []bool {
	r := rand.New(rand.NewPCG(seed, k))
	n := calls.Min
	if calls.Max > n {
		n += r.IntN(calls.Max - n + 1)
	}
	safe := make([]bool, n)
	for i := range safe {
		safe[i] = r.Float64() < safeShare
	}
	return safe
}

// calls are the turn's calls as the client submits them.
func (s turnSpec) calls(service time.Duration) []client.Call {
	out := make([]client.Call, len(s.safe))
	ms := service.Milliseconds()
	for i, safe := range s.safe {
		if service == 0 && safe {
			out[i] = client.Call{Name: "Noop", Input: json.RawMessage(`{"n":1}`)}
			continue
		}
		out[i] = client.Call{Name: "Sleep", Input: json.RawMessage(fmt.Sprintf(`{"ms":%d,"safe":%v}`, ms, safe))}
	}
	return out
}

// offset is when call i of n is published, counted from the turn's first
// publish: evenly over the stream time.
func offset(stream time.Duration, i, n int) time.Duration {
	if stream <= 0 || n == 0 {
		return 0
	}
	return stream * time.Duration(i) / time.Duration(n)
}
