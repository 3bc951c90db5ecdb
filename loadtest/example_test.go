package loadtest_test

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/toolwire/toolwire/loadtest"
)

// Example runs ten seconds of 16 ten-call turns in flight on an embedded
// server with a pipeline in the process, then the baseline, and prints the
// summary (compiled, not run: it takes twenty seconds).
func Example() {
	rep, err := loadtest.Run(context.Background(), loadtest.Config{
		Concurrency: 16, Duration: 10 * time.Second, CallsPerTurn: loadtest.Range{Min: 10, Max: 10},
		SafeShare: 0.5, Baseline: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = rep.WriteSummary(os.Stdout)
	_ = rep.WriteJSON(os.Stdout)
}
