package sandbox

import (
	"fmt"
	"os"
	"sync"
)

// lifelineFD is the descriptor the init finds its lifeline on: the first
// of a command's extra files.
const lifelineFD = 3

// lifeline ties every init this program starts to the program's life. It
// is the read end of a pipe whose write end this process alone holds and
// never closes: an init reads end-of-file the moment the program is gone,
// however it died and however early in the init's life.
//
// A parent-death signal cannot promise that. It comes at once, but an init
// that is PID 1 of its namespace drops any signal it has no handler for,
// and it has none until its runtime has started: a worker killed in the
// first milliseconds of a command's start left the command running, to
// write after the agent was told "outcome unknown".
//
// The pipe is the process's, one for its whole life, so it is made once;
// a failure to make it (out of descriptors) is not kept, and the next
// command tries again.
func lifeline() (*os.File, error) {
	heldLifeline.Lock()
	defer heldLifeline.Unlock()
	if heldLifeline.r != nil {
		return heldLifeline.r, nil
	}
	r, w, err := os.Pipe() // close-on-exec: only the inits get a copy, of r
	if err != nil {
		return nil, fmt.Errorf("sandbox: the inits' lifeline: %w", err)
	}
	heldLifeline.r, heldLifeline.w = r, w
	return r, nil
}

// heldLifeline is the lifeline's two ends. Held here, the write end is
// never collected and closed while the program lives.
var heldLifeline struct {
	sync.Mutex
	r, w *os.File
}
