package loadtest

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"
)

// bar is a live progress bar over the run's duration, or nothing.
type bar struct{ b *progressbar.ProgressBar }

func newBar(w io.Writer, what string, d time.Duration) *bar {
	if w == nil {
		return &bar{}
	}
	return &bar{progressbar.NewOptions64(d.Milliseconds(),
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionClearOnFinish(),
	)}
}

// tick shows the elapsed time and the results so far.
func (b *bar) tick(what string) func(time.Duration, int) {
	if b.b == nil {
		return nil
	}
	return func(elapsed time.Duration, results int) {
		b.b.Describe(fmt.Sprintf("%s: %d results, %.0f/s", what, results, float64(results)/elapsed.Seconds()))
		_ = b.b.Set64(min(elapsed.Milliseconds(), b.b.GetMax64()))
	}
}

func (b *bar) finish() {
	if b.b != nil {
		_ = b.b.Finish()
	}
}

// ticker calls tick with the time since start and the results so far five
// times a second until stop is called; a nil tick does nothing.
func ticker(start time.Time, tick func(elapsed time.Duration, results int), results func() int) (stop func()) {
	if tick == nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		tk := time.NewTicker(200 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				tick(time.Since(start), results())
			}
		}
	}()
	return func() { close(done) }
}
