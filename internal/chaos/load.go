package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/texts"
)

// turnCalls draws a mixed turn of one to four calls: read-only calls that
// may run again after a worker died (Sleep, safe), calls with a side effect
// that must not (Sleep, unsafe), and Bash commands that append the call's
// name, once, to the side-effect ledger; each Bash call first sleeps, so
// that kills find some of them running.
func turnCalls(r *rand.Rand, turn string) []client.Call {
	n := 1 + r.IntN(4)
	calls := make([]client.Call, n)
	for i := range calls {
		id := fmt.Sprintf("toolu_%s_%d", turn[len(turn)-8:], i)
		switch p := r.Float64(); {
		case p < 0.45:
			calls[i] = client.Call{ID: id, Name: "Sleep", Input: json.RawMessage(fmt.Sprintf(`{"ms":%d,"safe":true}`, 20+r.IntN(180)))}
		case p < 0.6:
			calls[i] = client.Call{ID: id, Name: "Sleep", Input: json.RawMessage(fmt.Sprintf(`{"ms":%d}`, 20+r.IntN(80)))}
		default:
			cmd := fmt.Sprintf("sleep 0.%d; echo %s.%d $EPOCHREALTIME >> ledger", 1+r.IntN(4), turn, i)
			in, _ := json.Marshal(map[string]string{"command": cmd})
			calls[i] = client.Call{ID: id, Name: "Bash", Input: in}
		}
	}
	return calls
}

// drive runs closed-loop turns until ctx's deadline passes (new turns stop
// at stopAt); each turn's results are read until turn_done or until the
// drain deadline.
func drive(ctx context.Context, cl *client.Client, obs *observer, seed uint64, stopAt, drainUntil time.Time) {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for time.Now().Before(stopAt) && ctx.Err() == nil {
		turn := client.NewTurnID()
		calls := turnCalls(r, turn)
		obs.begin(turn, len(calls))
		tctx, cancel := context.WithDeadline(ctx, drainUntil)
		err := cl.SubmitCalls(tctx, turn, calls, client.TurnOptions{})
		if err == nil {
			read(tctx, cl, obs, turn)
		} else {
			obs.refused(turn, err)
		}
		cancel()
	}
}

// read follows one turn's results; a failed read (a node's death can
// break the subscription) starts again, and the observer counts a result
// seen twice as a duplicate only when the out stream holds it twice
// (audit), so a second read is harmless.
func read(ctx context.Context, cl *client.Client, obs *observer, turn string) {
	got := map[int]bool{}
	for ctx.Err() == nil {
		for d, err := range cl.Results(ctx, turn) {
			if err != nil {
				break
			}
			if d.Done != nil {
				obs.finish(turn, d.At)
				return
			}
			if !got[d.Result.Seq] {
				got[d.Result.Seq] = true
				obs.deliver(turn, d.Result, d.At, d.Result.IsError && strings.Contains(d.Result.Content, texts.OutcomeUnknown))
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// driveOpen starts rate turns a second until stopAt, whatever the
// pipeline's pace, each on its own, with at most maxInFlight unfinished:
// a turn due beyond that waits for one to finish (the producer slowed
// down, not a backlog growing in memory); it returns how many waited.
func driveOpen(ctx context.Context, cl *client.Client, obs *observer, rate float64, maxInFlight int, stopAt, drainUntil time.Time) int {
	slots := make(chan struct{}, maxInFlight)
	var wg sync.WaitGroup
	defer wg.Wait()
	gap := time.Duration(float64(time.Second) / rate)
	next := time.Now()
	waited := 0
	for k := uint64(1); time.Now().Before(stopAt) && ctx.Err() == nil; k++ {
		if !sleepUntil(ctx, next) {
			break
		}
		next = next.Add(gap)
		select {
		case slots <- struct{}{}:
		default:
			waited++
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return waited
			}
		}
		wg.Go(func() {
			defer func() { <-slots }()
			r := rand.New(rand.NewPCG(k, k^0x9e3779b97f4a7c15))
			turn := client.NewTurnID()
			calls := turnCalls(r, turn)
			obs.begin(turn, len(calls))
			tctx, cancel := context.WithDeadline(ctx, drainUntil)
			defer cancel()
			if err := cl.SubmitCalls(tctx, turn, calls, client.TurnOptions{}); err != nil {
				obs.refused(turn, err)
			} else {
				read(tctx, cl, obs, turn)
			}
		})
	}
	return waited
}
