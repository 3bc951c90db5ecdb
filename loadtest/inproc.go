package loadtest

import (
	"context"
	"sync"
	"time"
)

// inprocTurn runs a turn the way one process would without a pipeline:
// each call on a goroutine under the partition rule (consecutive safe calls
// together, up to the turn's limit; an unsafe call alone, once every earlier
// call has finished), taking the service time. A result is delivered once
// it and every earlier one have finished; turn_done once all have and the
// stream has ended.
func inprocTurn(c Config) runTurn {
	return func(ctx context.Context, _ uint64, spec turnSpec) *turnObs {
		n := len(spec.safe)
		o := &turnObs{spec: spec, pubAt: make([]time.Time, n)}
		start, finish := make([]time.Time, n), make([]time.Time, n)
		slots := make(chan struct{}, c.MaxConcurrency)
		var running sync.WaitGroup
		work := func(i int) {
			start[i] = time.Now()
			if c.ServiceTime > 0 {
				time.Sleep(c.ServiceTime)
			}
			finish[i] = time.Now()
		}
		t0 := time.Now()
		published := n
		for i, safe := range spec.safe {
			if !pace(ctx, t0, c.StreamTime, i, n) {
				published = i
				break
			}
			o.pubAt[i] = time.Now()
			if !safe {
				running.Wait()
				work(i)
				continue
			}
			slots <- struct{}{}
			running.Go(func() {
				defer func() { <-slots }()
				work(i)
			})
		}
		running.Wait()
		ended := pace(ctx, t0, c.StreamTime, n, n)
		var upTo time.Time
		for i := range published {
			if finish[i].After(upTo) {
				upTo = finish[i]
			}
			o.deliveries = append(o.deliveries, delivery{seq: i, at: upTo, start: start[i], finish: finish[i]})
		}
		if ended && published == n {
			o.doneAt = time.Now()
		}
		return o
	}
}
