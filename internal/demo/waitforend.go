package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/toolwire/toolwire/internal/localrun"
	"github.com/toolwire/toolwire/tool"
)

// compareWaitForEnd runs the same stream again, at the same pace, on a
// fresh copy of the project and a fresh pipeline, with the calls held
// until the stream ended (localrun.Options.WaitForEnd), and prints when
// each run's turn completed: turn_done as received, counted from the first
// byte of its own stream.
func compareWaitForEnd(ctx context.Context, w io.Writer, tools *tool.Registry, executors int, streamed *localrun.Report) error {
	dir, err := os.MkdirTemp("", "toolwire-demo-project-")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := Setup(dir); err != nil {
		return err
	}
	held, err := localrun.Run(ctx, localrun.Options{
		Format: "anthropic", Stream: Stream, Pace: Pace, WorkDir: dir, Tools: tools, Executors: executors, WaitForEnd: true,
	}, nil)
	if err != nil {
		return fmt.Errorf("demo: wait-for-end run: %w", err)
	}
	fmt.Fprintf(w, "\nTurn complete (turn_done received, 0 = first byte of the stream): streaming execution at %s, "+
		"wait-for-end at %s (the same stream replayed again, its calls held until it ended; both measured).\n",
		doneAfter(streamed), doneAfter(held))
	return nil
}

// doneAfter is when the turn's turn_done arrived, after its stream began.
func doneAfter(rep *localrun.Report) string {
	if rep.DoneAt.IsZero() {
		return "never"
	}
	return fmt.Sprintf("%.0fms", float64(rep.DoneAt.Sub(rep.Stream.StartedAt))/float64(time.Millisecond))
}
