package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/lease"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/testtools"
)

// TestHousekeepingLevelsOff runs 100,000 one-call turns (10,000 under the
// race detector) and samples the streams and the lease bucket: the in,
// exec and result streams hold only what is in flight, the lease bucket
// the turns of the last FinishedTTL (and their markers), the out stream
// the turns of the last Keep. None of them grows with the number of turns.
func TestHousekeepingLevelsOff(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 100,000 turns")
	}
	turns := 100_000
	if raceEnabled {
		turns = 10_000
	}
	const keep = 3 * time.Second
	srv := testenv.Server(t)
	sp := subjects.Default()
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...), Provision: provision.Config{Keep: keep}})
	cl := testenv.Client(t, srv)
	js, err := jetstream.New(testenv.Conn(t, srv, "inspect"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	var done atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 16 {
		wg.Go(func() {
			for n := next.Add(1); n <= int64(turns) && ctx.Err() == nil; n = next.Add(1) {
				turn := fmt.Sprintf("hk_%d", n)
				if err := cl.SubmitCalls(ctx, turn, []client.Call{{Name: "Noop", Input: json.RawMessage(`{}`)}}, client.TurnOptions{}); err != nil {
					t.Error(err)
					return
				}
				if _, d, err := testenv.ReadTurn(ctx, cl, turn); err != nil || d.Results != 1 {
					t.Errorf("turn %s: %v", turn, err)
					return
				}
				done.Add(1)
			}
		})
	}
	streams := map[string]string{"in": sp.InStream(), "exec": sp.ExecStream(), "result": sp.ResultStream(), "out": sp.OutStream(), "lease": "KV_" + sp.LeaseBucket()}
	peak := map[string]uint64{}
	sample := func() {
		for name, stream := range streams {
			s, err := js.Stream(ctx, stream)
			if err != nil {
				t.Fatal(err)
			}
			info, err := s.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			peak[name] = max(peak[name], info.State.Msgs)
		}
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for running := true; running; {
		select {
		case <-finished:
			running = false
		case <-tick.C:
			sample()
		}
	}
	sample()
	took := time.Since(start)
	rate := float64(done.Load()) / took.Seconds()
	t.Logf("%d turns in %s (%.0f turns/s); most held: %v", done.Load(), took.Round(time.Millisecond), rate, peak)
	if done.Load() != int64(turns) {
		t.Fatalf("%d turns of %d completed", done.Load(), turns)
	}
	// What a turn may leave, at the rate measured, with slack for the
	// server's expiry timers and a rate that varies over the run: the out
	// stream 2 messages a turn for Keep, the lease bucket a message (then a
	// marker) for FinishedTTL and the markers' 5 s.
	slack := func(d time.Duration, perTurn float64) uint64 {
		return uint64(3*rate*(d+2*time.Second).Seconds()*perTurn) + 1000
	}
	bounds := map[string]uint64{
		"in": 1000, "exec": 1000, "result": 1000,
		"out":   slack(keep, 2),
		"lease": slack(lease.FinishedTTL+5*time.Second, 1),
	}
	for name, b := range bounds {
		if peak[name] > b {
			t.Errorf("the %s stream held %d messages, over %d: it grows with the turns", name, peak[name], b)
		}
	}
	// A run longer than what a turn may be kept for must not hold them all.
	if took > keep+5*time.Second && peak["out"] >= uint64(2*turns) {
		t.Errorf("the out stream kept every turn: %d messages", peak["out"])
	}
	if took > lease.FinishedTTL+10*time.Second && peak["lease"] >= uint64(turns) {
		t.Errorf("the lease bucket kept every turn: %d messages", peak["lease"])
	}
}
