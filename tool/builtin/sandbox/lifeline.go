package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sync"
)

// lifelineFD is the descriptor the init finds its lifeline on: the first
// of a command's extra files.
const lifelineFD = 3

// Cmd is a contained command: an exec.Cmd, and the lifeline of its init.
// Start, Wait, Run, Output and CombinedOutput are exec.Cmd's with the
// lifeline held and let go; start and wait through them, never through
// the embedded exec.Cmd's own.
type Cmd struct {
	*exec.Cmd
	// UnderInit says the command runs under an init, which stops the
	// whole command (escaped sessions included) when its context ends.
	UnderInit bool

	line *lifeline // nil for a command without an init of this program's
}

// lifeline ties an init to the command's call and to this program's life.
// It is a pipe whose read end the init gets (on lifelineFD) and whose
// write end only this process holds: the init reads end-of-file once the
// write end is closed, when the command's context ends (a timeout, a
// cancel, a lost claim) or when the program dies, however it died and
// however early in the init's life.
//
// Signals cannot promise that. An init that is PID 1 of its namespace
// drops any signal it has no handler for, and it has none until its
// runtime has started: a worker killed, or a call cancelled, in the first
// milliseconds of a command's start left the command running, to write
// after the agent was told "outcome unknown". And a signal that kills
// bubblewrap while it sets up leaves bubblewrap's child stranded.
type lifeline struct {
	r, w *os.File
	cut  sync.Once
}

// newLifeline makes a command's lifeline. Both ends are close-on-exec:
// the init gets its copy of r as an extra file, and no command a copy of w.
func newLifeline() (*lifeline, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: a command's lifeline: %w", err)
	}
	return &lifeline{r: r, w: w}, nil
}

// end closes the write end: the init stops the command and exits.
func (l *lifeline) end() error {
	l.cut.Do(func() { l.w.Close() })
	return nil
}

// Start starts the command. The command's own copy of the lifeline's read
// end is all there is once it has started.
func (c *Cmd) Start() error {
	err := c.Cmd.Start()
	if c.line != nil {
		c.line.r.Close()
		if err != nil {
			c.line.end()
		}
	}
	return err
}

// Wait waits for the command to end, then lets its lifeline go.
func (c *Cmd) Wait() error {
	err := c.Cmd.Wait()
	if c.line != nil {
		c.line.end()
	}
	return err
}

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Output runs the command and returns its standard output.
func (c *Cmd) Output() ([]byte, error) {
	var out bytes.Buffer
	c.Stdout = &out
	err := c.Run()
	return out.Bytes(), err
}

// CombinedOutput runs the command and returns its standard output and
// standard error together.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	return out.Bytes(), err
}
