package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool/testtools"
)

// BenchmarkPipeline pushes Noop calls through the whole pipeline on an
// embedded server (file storage, 2 executors, 1 router, 1 reorder) with
// `inflight` turns at a time. It reports calls/s and the end-to-end latency
// of a call: from the moment its turn is submitted to the moment the client
// receives its result in order.
func BenchmarkPipeline(b *testing.B) {
	for _, c := range []struct{ perTurn, inflight int }{{1, 1}, {1, 16}, {10, 16}} {
		b.Run(fmt.Sprintf("calls_per_turn=%d/inflight=%d", c.perTurn, c.inflight), func(b *testing.B) {
			benchPipeline(b, c.perTurn, c.inflight)
		})
	}
}

func benchPipeline(b *testing.B, perTurn, inflight int) {
	srv := testenv.Server(b)
	p := testenv.Pipeline(b, srv, pipeline.Config{Tools: testenv.Registry(b, testtools.Tools()...), Executors: 2})
	cl := testenv.Client(b, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	calls := make([]client.Call, perTurn)
	for i := range calls {
		calls[i] = client.Call{ID: fmt.Sprintf("toolu_%d", i), Name: "Noop", Input: json.RawMessage(`{"n":1}`)}
	}
	turns := max(1, b.N/perTurn)
	hist := hdrhistogram.New(1, int64(time.Minute/time.Microsecond), 3)
	var mu sync.Mutex
	var next atomic.Int64
	var failed atomic.Value
	b.ResetTimer()
	before := p.Stats()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range inflight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := next.Add(1)
				if n > int64(turns) {
					return
				}
				turn := fmt.Sprintf("bench_%d_%d", w, n)
				t0 := time.Now()
				errc := make(chan error, 1)
				go func() { errc <- cl.SubmitCalls(ctx, turn, calls, client.TurnOptions{}) }()
				var lat []int64
				for d, err := range cl.Results(ctx, turn) {
					if err != nil {
						failed.Store(err)
						return
					}
					if d.Done != nil {
						break
					}
					lat = append(lat, d.At.Sub(t0).Microseconds())
				}
				if err := <-errc; err != nil {
					failed.Store(err)
					return
				}
				mu.Lock()
				for _, l := range lat {
					_ = hist.RecordValue(l)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	total := float64(turns * perTurn)
	b.ReportMetric(total/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(hist.ValueAtQuantile(50))/1000, "p50_ms")
	b.ReportMetric(float64(hist.ValueAtQuantile(99))/1000, "p99_ms")
	after := p.Stats()
	// Messages the stages sent per call: publishes, requests and acks, the
	// machine-independent count of a call's round trips.
	b.ReportMetric(float64(after.OutMsgs-before.OutMsgs)/total, "stage_msgs/call")
	b.ReportMetric(0, "ns/op")
}
