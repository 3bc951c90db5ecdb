package reorder_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool/testtools"
)

// TestGapDeadline: a turn whose first call's result never comes, while the
// second result and the turn's end are stored, is not retried for ever:
// after the gap's deadline the missing call gets an error result that says
// so, the stored result follows in its place, and turn_done ends the turn.
func TestGapDeadline(t *testing.T) {
	srv := testenv.Server(t)
	startPipeline(t, srv, pipeline.Config{
		Tools:   testenv.Registry(t, testtools.Tools()...),
		Routers: -1, Executors: -1,
		GapDeadline: time.Second, Backoff: stage.Backoff{Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond},
	})
	js := jsFor(t, srv, "test-gap")
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const turn = "gap"
	if err := publishResult(ctx, js, turn, 1); err != nil {
		t.Fatal(err)
	}
	if err := publishEndMarker(ctx, js, turn, 2); err != nil {
		t.Fatal(err)
	}
	results, done, err := readTurn(ctx, cl, turn)
	if err != nil {
		t.Fatalf("the turn never completed: %v (%d results)", err, len(results))
	}
	if len(results) != 2 || done.Results != 2 {
		t.Fatalf("%d results, turn_done %d", len(results), done.Results)
	}
	if r := results[0]; !r.IsError || !strings.Contains(r.Content, "never arrived") {
		t.Errorf("seq 0: want the never-arrived error, got %+v", r)
	}
	if r := results[1]; r.IsError || r.Content != content(turn, 1) {
		t.Errorf("seq 1: %+v", r)
	}
}
