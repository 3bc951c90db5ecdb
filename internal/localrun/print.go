package localrun

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/toolwire/toolwire/schemas"
)

// Print runs a turn like Run and writes what the agent receives to w as
// JSON lines, as `toolwire run` prints them: each result in delivery
// order, with progress each progress event as it happens, then the turn's
// turn_done line once it ended — even when its submission failed in part
// (a call refused for its size is answered in its place). Nothing is
// written after turn_done. The error is Run's, else the first failed
// write's.
func Print(ctx context.Context, w io.Writer, o Options, progress bool) error {
	var (
		mu     sync.Mutex // results and progress come on different goroutines
		werr   error
		closed bool // turn_done is written: nothing may follow it
	)
	write := func(f func() error) {
		mu.Lock()
		defer mu.Unlock()
		if werr == nil && !closed {
			werr = f()
		}
	}
	if progress {
		o.OnProgress = func(p *schemas.ToolProgress) { write(func() error { return WriteProgress(w, p) }) }
	}
	rep, err := Run(ctx, o, func(r *schemas.ToolResult) {
		write(func() error { return WriteResult(w, r) })
	})
	if rep != nil && rep.Done != nil {
		write(func() error {
			closed = true
			return WriteDone(w, rep)
		})
	}
	if err != nil {
		return err
	}
	if werr != nil {
		return fmt.Errorf("writing results: %w", werr)
	}
	return nil
}
