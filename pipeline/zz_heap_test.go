package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool/testtools"
)

func TestZZHeap(t *testing.T) {
	srv := testenv.Server(t)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...), Executors: 2})
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	calls := []client.Call{{ID: "toolu_0", Name: "Noop", Input: []byte(`{"n":1}`)}}
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for n := 0; n < 2500; n++ {
				turn := fmt.Sprintf("hp_%d_%d", w, n)
				errc := make(chan error, 1)
				go func() { errc <- cl.SubmitCalls(ctx, turn, calls, client.TurnOptions{}) }()
				for d, err := range cl.Results(ctx, turn) {
					if err != nil || d.Done != nil {
						break
					}
				}
				<-errc
			}
		})
	}
	wg.Wait()
	runtime.GC()
	f, _ := os.Create("/tmp/heap.prof")
	pprof.WriteHeapProfile(f)
	f.Close()
}
