package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/proctest"
	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

// noInitEnv has a re-run of this test binary play a program that does not
// call sandbox.Main in TestBashCancelledWithoutInit: "backend,dir".
const noInitEnv = "TOOLWIRE_TEST_NO_INIT"

// noInitCalls is how many calls the program without an init cancels. A
// cancel in a command's first milliseconds once let 18 to 30 of them write
// under bubblewrap.
const noInitCalls = 400

// noInitReport is what the program without an init prints.
type noInitReport struct {
	Auto    string   `json:"auto"`    // the default policy's containment, which says there is no init
	Control bool     `json:"control"` // the call not cancelled wrote
	Left    []string `json:"left"`    // processes left behind, "pid: command line"
	Err     string   `json:"err,omitempty"`
}

// runCancelsWithoutInit is the re-run's part: as the reaper of every
// orphan below it, it runs noInitCalls commands that would write to dir
// half a second after their start, cancels each within its first 30 ms,
// twenty at a time, and runs one more to its end; then it reports what was
// left running once they would all have written.
func runCancelsWithoutInit(arg string) int {
	var rep noInitReport
	defer func() { _ = json.NewEncoder(os.Stdout).Encode(rep) }()
	backend, dir, _ := strings.Cut(arg, ",")
	if err := proctest.Subreaper(); err != nil {
		rep.Err = "subreaper: " + err.Error()
		return 0
	}
	p := sandbox.Policy{Sandbox: sandbox.Backend(backend)}
	c := p.Containment()
	rep.Auto = sandbox.Status()
	r := bashRunner{maxCapture: 1 << 10, contain: func() sandbox.Containment { return c }}
	var wg sync.WaitGroup
	for i := range noInitCalls {
		wg.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(rand.N(30*time.Millisecond), cancel)
			_, _ = r.run(ctx, "sleep 0.5; touch "+filepath.Join(dir, "wrote"+strconv.Itoa(i)), dir, "", time.Minute)
		})
		if i%20 == 19 {
			wg.Wait()
		}
	}
	wg.Wait()
	res, err := r.run(context.Background(), "touch "+filepath.Join(dir, "control"), dir, "", time.Minute)
	if err != nil || res.IsError {
		rep.Err = fmt.Sprintf("the control call failed: %v %s", err, res.Content)
	}
	_, err = os.Stat(filepath.Join(dir, "control"))
	rep.Control = err == nil
	time.Sleep(time.Second)
	rep.Left = killLeft()
	return 0
}

// TestBashCancelledWithoutInit: in a program that does not call
// sandbox.Main (a library user's, or a test binary's), a Bash call
// cancelled in its command's first milliseconds (a lost claim, a turn's
// cancel) stops its command all the same, and leaves no process behind.
// Under bubblewrap such a cancel once killed bwrap while it set up,
// which left its child to run the command, nobody to stop it.
func TestBashCancelledWithoutInit(t *testing.T) {
	if testing.Short() {
		t.Skip("re-runs the test binary, which runs hundreds of commands")
	}
	if raceEnabled {
		t.Skip("runs in the plain test run: the commands are other processes, out of the detector's sight")
	}
	for _, b := range []sandbox.Backend{sandbox.BackendBwrap, sandbox.BackendNone} {
		t.Run(string(b), func(t *testing.T) {
			if c := (sandbox.Policy{Sandbox: b}).Containment(); c.Backend != b {
				t.Skip(c.Status)
			}
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), noInitEnv+"="+string(b)+","+dir)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			var rep noInitReport
			if err != nil || json.Unmarshal(out, &rep) != nil || rep.Err != "" {
				t.Fatalf("the program failed: %v %s\n%s%s", err, rep.Err, out, stderr.String())
			}
			if !strings.Contains(rep.Auto, "sandbox.Main") {
				t.Errorf("the program ran with an init: %s", rep.Auto)
			}
			if !rep.Control {
				t.Error("the call that was not cancelled did not write")
			}
			wrote, _ := filepath.Glob(filepath.Join(dir, "wrote*"))
			if len(wrote) > 0 {
				t.Errorf("%d of %d cancelled commands wrote", len(wrote), noInitCalls)
			}
			if len(rep.Left) > 0 {
				t.Errorf("left running: %q", rep.Left)
			}
		})
	}
}
