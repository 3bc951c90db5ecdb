package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// lifelineFD is the descriptor the init finds its lifeline on: the first
// of a command's extra files.
const lifelineFD = 3

// lifelineEnv tells the init which pipe its lifeline is (pipeID): a
// descriptor 3 it did not get from Start (its runtime opens files of its
// own as it starts) is not taken for one.
const lifelineEnv = "TOOLWIRE_SANDBOX_LIFELINE"

// Cmd is a contained command: an exec.Cmd, and the lifeline of its init
// (under bubblewrap without an init of this program's, bubblewrap's report
// of its child). Start, Wait, Run, Output and CombinedOutput are
// exec.Cmd's with the lifeline made, held and let go; start and wait
// through them: the embedded exec.Cmd's own start the init without a
// lifeline, which it takes for the end of its call (the command does not
// run), or bubblewrap without the descriptor it reports on.
type Cmd struct {
	*exec.Cmd
	// UnderInit says the command runs under an init (this program's or
	// bubblewrap's), which stops the whole command, escaped sessions
	// included, when its context ends.
	UnderInit bool

	hasInit bool      // an init of this program's, which expects a lifeline
	line    *lifeline // made by Start
	// child is bubblewrap's report of its child on infoFD, for bubblewrap
	// without an init of this program's; read from Start on.
	child *bwrapChild
}

// lifeline ties an init to the command's call and to this program's life.
// It is a pipe whose read end the init gets (on lifelineFD) and whose
// write end this process holds (and, where it is contained, no command
// can open; see Containment.Command): the init reads end-of-file once the
// write end is closed, when the command's context ends (a timeout, a
// cancel, a lost claim), after Wait, or when the program dies, however it
// died and however early in the init's life.
//
// Signals cannot promise that. An init that is PID 1 of its namespace
// drops any signal it has no handler for, and it has none until its
// runtime has started: a worker killed, or a call cancelled, in the first
// milliseconds of a command's start left the command running, to write
// after the agent was told "outcome unknown". And a signal that kills
// bubblewrap while it sets up leaves bubblewrap's child stranded.
type lifeline struct {
	w   *os.File
	cut sync.Once
}

// end closes the write end: the init stops the command and exits.
func (l *lifeline) end() {
	l.cut.Do(func() { l.w.Close() })
}

// Start starts the command, with its lifeline where it has an init. Both
// ends of the pipe are close-on-exec: the init gets its copy of the read
// end as its first extra file, and no other command a copy of the write
// end; once the init has started, this process keeps only the write end.
func (c *Cmd) Start() error {
	switch {
	case c.Process != nil || !c.hasInit && c.child == nil:
		return c.Cmd.Start() // a second Start is exec's error, and cuts nothing
	case c.child != nil:
		return c.startReporting()
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("sandbox: a command's lifeline: %w", err)
	}
	c.line = &lifeline{w: w}
	c.Env = append(c.Env, lifelineEnv+"="+pipeID(int(r.Fd())))
	if err := c.startPassing(r); err != nil {
		c.line.end()
		return err
	}
	return nil
}

// startReporting starts bubblewrap with the write end of a pipe as its
// info descriptor, and reads its report from the other end. The report is
// made in Command, before the start: exec may call Cancel as soon as it
// has started bwrap, which then waits for the report.
func (c *Cmd) startReporting() error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("sandbox: bubblewrap's info descriptor: %w", err)
	}
	if err := c.startPassing(w); err != nil {
		r.Close()
		return err
	}
	c.child.watch(r, c.Process.Pid)
	return nil
}

// startPassing starts the command with f as its first extra file (on
// descriptor 3), and closes this process's copy of f.
func (c *Cmd) startPassing(f *os.File) error {
	c.ExtraFiles = append([]*os.File{f}, c.ExtraFiles...)
	err := c.Cmd.Start()
	f.Close()
	return err
}

// stop is the command's Cancel: the lifeline is cut, and the init is also
// told by SIGTERM, for an init that a command could keep from reading its
// lifeline's end (see Containment.Command).
func (c *Cmd) stop(signal bool) error {
	if c.line != nil {
		c.line.end()
	}
	if signal {
		return c.Process.Signal(syscall.SIGTERM)
	}
	return nil
}

// Wait waits for the command to end, then lets its lifeline go (and,
// under bubblewrap without an init, kills what bubblewrap left).
func (c *Cmd) Wait() error {
	err := c.Cmd.Wait()
	if c.line != nil {
		c.line.end()
	}
	if c.child != nil {
		c.child.done()
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

// Output runs the command and returns its standard output. Unlike
// exec.Cmd's, it does not keep standard error in the ExitError.
func (c *Cmd) Output() ([]byte, error) {
	if c.Stdout != nil {
		return nil, errors.New("exec: Stdout already set")
	}
	var out bytes.Buffer
	c.Stdout = &out
	err := c.Run()
	return out.Bytes(), err
}

// CombinedOutput runs the command and returns its standard output and
// standard error together.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	if c.Stdout != nil || c.Stderr != nil {
		return nil, errors.New("exec: Stdout or Stderr already set")
	}
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	return out.Bytes(), err
}
