package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

// The test binary contains its Bash calls as toolwire does: it re-runs
// itself as each command's init.
func TestMain(m *testing.M) {
	if arg, ok := os.LookupEnv(noInitEnv); ok {
		// A program that does not call sandbox.Main.
		os.Exit(runCancelsWithoutInit(arg))
	}
	sandbox.Main()
	if backend, ok := os.LookupEnv(secretProbeEnv); ok {
		os.Exit(runSecretProbe(backend))
	}
	if arg, ok := os.LookupEnv(workerDeathEnv); ok {
		os.Exit(runWorkerDeath(arg))
	}
	if _, ok := os.LookupEnv(rawSocketEnv); ok {
		os.Exit(tryRawSocket())
	}
	os.Exit(m.Run())
}

// bashUnder runs one command with the Bash tool under policy.
func bashUnder(t *testing.T, policy sandbox.Policy, dir, command string) tool.Result {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"command": command})
	res, err := BashWith(policy).Call(context.Background(), raw, tool.TurnContext{WorkDir: dir}, nil)
	if err != nil {
		t.Fatalf("%q: %v", command, err)
	}
	return res
}

// eachBackend runs f under each confining backend in turn, forced by the
// policy, and skips the one this host lacks, saying why.
func eachBackend(t *testing.T, f func(t *testing.T, p sandbox.Policy)) {
	for _, b := range []sandbox.Backend{sandbox.BackendLandlock, sandbox.BackendBwrap} {
		t.Run(string(b), func(t *testing.T) {
			p := sandbox.Policy{Sandbox: b}
			if c := p.Containment(); c.Backend != b {
				t.Skip(c.Status)
			}
			f(t, p)
		})
	}
}

// secretProbeEnv has a re-run of this test binary run TestBashSeesNoSecret's
// command under the backend it names, print what it learned, and exit.
const secretProbeEnv = "TOOLWIRE_TEST_SECRET_PROBE"

// secretProbe is the re-run's part: it is the serving process, with the
// secret in its starting environment, where /proc shows it (t.Setenv
// changes the environment os.Environ reads, not that one).
type secretProbe struct {
	Cmdline string      `json:"cmdline"` // this process's, as /proc shows it
	Result  tool.Result `json:"result"`
	Err     string      `json:"err,omitempty"`
}

// runSecretProbe runs the command as the serving process and prints the
// probe: the environment the command sees and its parent's, and this
// process's command line and environment as the command reads them in
// /proc.
func runSecretProbe(backend string) int {
	self := os.Getpid()
	cmdline, _ := os.ReadFile("/proc/self/cmdline")
	command := fmt.Sprintf(`env; tr '\0' '\n' < /proc/$PPID/environ; echo "home=$HOME allowed=$TOOLWIRE_TEST_ALLOWED"
echo "server-cmdline=$(tr '\0' ' ' < /proc/%[1]d/cmdline)"
{ tr '\0' '\n' < /proc/%[1]d/environ && echo server-environ-readable; } | grep -e ^TOOLWIRE_TEST_ -e server-environ-readable`, self)
	raw, _ := json.Marshal(map[string]any{"command": command})
	p := sandbox.Policy{Sandbox: sandbox.Backend(backend), Env: []string{"TOOLWIRE_TEST_ALLOWED"}}
	dir, err := os.MkdirTemp("", "toolwire-secret-probe-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	res, err := BashWith(p).Call(context.Background(), raw, tool.TurnContext{WorkDir: dir}, nil)
	probe := secretProbe{Cmdline: strings.ReplaceAll(string(cmdline), "\x00", " "), Result: res}
	if err != nil {
		probe.Err = err.Error()
	}
	if err := json.NewEncoder(os.Stdout).Encode(probe); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestBashSeesNoSecret: a secret in the serving process's starting
// environment reaches neither the command's environment, nor its
// parent's, nor, through /proc, the serving process's: the command does
// not see the server's process at all. The serving process is a re-run of
// this binary with the secret in its starting environment.
func TestBashSeesNoSecret(t *testing.T) {
	eachBackend(t, func(t *testing.T, p sandbox.Policy) {
		if c := p.Containment(); !c.Processes {
			t.Skip("the server's processes are visible here: " + c.Status)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "TOOLWIRE_TEST_SECRET=hunter2-secret", "TOOLWIRE_TEST_ALLOWED=visible",
			secretProbeEnv+"="+string(p.Sandbox))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the serving process: %v\n%s", err, out)
		}
		var probe secretProbe
		if err := json.Unmarshal(out, &probe); err != nil || probe.Err != "" {
			t.Fatalf("the serving process printed %q: %v %s", out, err, probe.Err)
		}
		content := probe.Result.Content
		if strings.Contains(content, "hunter2") {
			t.Fatalf("the command saw the secret:\n%s", content)
		}
		if !strings.Contains(content, "home="+os.Getenv("HOME")+" allowed=visible") {
			t.Errorf("HOME or the allowed name is missing:\n%s", content)
		}
		// In a PID namespace of the command's own the server's process id
		// names no process (or another one), whose environ is not the
		// server's.
		if strings.Contains(content, "server-cmdline="+probe.Cmdline) {
			t.Errorf("the command sees the serving process (%s), readable environ %v:\n%s",
				probe.Cmdline, strings.Contains(content, "server-environ-readable"), content)
		}
	})
}

// TestBashLeavesNothingBehind: background jobs, a setsid one and a double
// fork included, are gone once the call has returned, and when it timed
// out. The processes are found by their arguments, which are the same in
// any PID namespace.
func TestBashLeavesNothingBehind(t *testing.T) {
	eachBackend(t, func(t *testing.T, p sandbox.Policy) {
		tag := strconv.FormatInt(time.Now().UnixNano()%1e6, 10)
		res := bashUnder(t, p, t.TempDir(), fmt.Sprintf(`setsid sleep 300.%[1]s &
( setsid sleep 301.%[1]s & ) &
nohup sleep 302.%[1]s > /dev/null 2>&1 &
sleep 0.2; echo started`, tag))
		if res.IsError || res.Content != "started" {
			t.Fatalf("%+v", res)
		}
		if !eventually(t, 5*time.Second, func() bool { return len(running(tag)) == 0 }) {
			t.Errorf("processes outlived their call: %v", running(tag))
		}

		raw, _ := json.Marshal(map[string]any{"timeout": 1500, "command": fmt.Sprintf(`setsid sleep 303.%[1]s & sleep 304.%[1]s`, tag)})
		res, err := BashWith(p).Call(context.Background(), raw, tool.TurnContext{WorkDir: t.TempDir()}, nil)
		if err != nil || !res.IsError || !strings.Contains(res.Content, "timed out") {
			t.Fatalf("a call past its timeout: %+v, %v", res, err)
		}
		if !eventually(t, 5*time.Second, func() bool { return len(running(tag)) == 0 }) {
			t.Errorf("processes outlived their timed-out call: %v", running(tag))
		}
	})
}

// running lists the live processes whose arguments hold tag.
func running(tag string) []string {
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), tag) {
			found = append(found, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// TestBashMemoryLimit: a command past its memory limit is stopped, and the
// model is told it failed.
func TestBashMemoryLimit(t *testing.T) {
	for _, b := range []sandbox.Backend{sandbox.BackendAuto, sandbox.BackendBwrap} {
		t.Run(string(b), func(t *testing.T) {
			p := sandbox.Policy{Sandbox: b, Limits: &sandbox.Limits{MemoryBytes: 256 << 20}}
			if c := p.Containment(); b == sandbox.BackendBwrap && c.Backend != b {
				t.Skip(c.Status)
			}
			res := bashUnder(t, p, t.TempDir(), `a=$(head -c 400000000 /dev/zero | tr '\0' x); echo "kept ${#a}"`)
			if !res.IsError || strings.Contains(res.Content, "kept 400000000") {
				t.Fatalf("a command past its limit ran on: %+v", res.Content)
			}
		})
	}
}

// TestBashWritesConfined: a command writes its turn's directory, /tmp and
// the policy's paths, and nothing else.
func TestBashWritesConfined(t *testing.T) {
	eachBackend(t, func(t *testing.T, p sandbox.Policy) {
		// Not under /tmp, which every command may write. A command run
		// by root tries to remount the root writable first.
		dir, outside := t.TempDir(), outsideTmp(t)
		res := bashUnder(t, p, dir, fmt.Sprintf(`echo in > inside.txt && echo ok-inside
mount -o remount,rw / 2>/dev/null; echo out > %s/outside.txt && echo wrote-outside
echo tmp > /tmp/toolwire-sandbox-test.$$ && rm /tmp/toolwire-sandbox-test.$$ && echo ok-tmp
echo dev > /dev/null && echo ok-dev`, outside))
		for _, want := range []string{"ok-inside", "ok-tmp", "ok-dev"} {
			if !strings.Contains(res.Content, want) {
				t.Errorf("the turn's directory, /tmp or /dev/null was not writable (no %s):\n%s", want, res.Content)
			}
		}
		if strings.Contains(res.Content, "wrote-outside") {
			t.Errorf("the command wrote outside its root:\n%s", res.Content)
		}
		if _, err := os.Stat(filepath.Join(outside, "outside.txt")); err == nil {
			t.Error("a file was written outside the turn's root")
		}
		if b, err := os.ReadFile(filepath.Join(dir, "inside.txt")); err != nil || string(b) != "in\n" {
			t.Errorf("the file written in the turn's directory: %q, %v", b, err)
		}
		// A path the policy names is writable.
		p.Writable = []string{outside}
		res = bashUnder(t, p, dir, fmt.Sprintf(`echo out > %s/allowed.txt && echo wrote`, outside))
		if !strings.Contains(res.Content, "wrote") {
			t.Errorf("a writable path of the policy: %s", res.Content)
		}
	})
}

// TestBashNetworkOff: no TCP connection unless the policy allows it.
func TestBashNetworkOff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	probe := fmt.Sprintf(`exec 3<>/dev/tcp/127.0.0.1/%d && echo connected`, port)
	eachBackend(t, func(t *testing.T, p sandbox.Policy) {
		if c := p.Containment(); !c.TCP {
			t.Skip("TCP is not cut off here: " + c.Status)
		}
		if res := bashUnder(t, p, t.TempDir(), probe); strings.Contains(res.Content, "connected") {
			t.Errorf("a command connected with the network off: %s", res.Content)
		}
		p.Network = true
		if res := bashUnder(t, p, t.TempDir(), probe); !strings.Contains(res.Content, "connected") {
			t.Errorf("a command could not connect with the network allowed: %s", res.Content)
		}
	})
}

// TestBashNoBackend: a policy whose backend is missing runs partly
// contained and says so, or, in strict mode, refuses the call and says
// why.
func TestBashNoBackend(t *testing.T) {
	p := sandbox.Policy{Sandbox: sandbox.BackendBwrap, Bwrap: "/nonexistent/bwrap"}
	c := p.Containment()
	if c.Backend != sandbox.BackendNone || c.Writes || !strings.Contains(c.Status, "partly contained: bash.sandbox is bwrap, but bubblewrap is not at /nonexistent/bwrap") {
		t.Errorf("containment %+v", c)
	}
	dir := t.TempDir()
	if res := bashUnder(t, p, dir, "echo ran"); res.IsError || res.Content != "ran" {
		t.Errorf("not strict: %+v", res)
	}
	p.Strict = true
	res := bashUnder(t, p, dir, "echo ran > ran.txt")
	if !res.IsError || !strings.Contains(res.Content, "strict sandbox mode") || !strings.Contains(res.Content, "/nonexistent/bwrap") {
		t.Errorf("strict: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); err == nil {
		t.Error("strict mode ran the command")
	}
}

// outsideTmp is a fresh directory outside /tmp, which every command may
// write: in the home or the package's directory, whichever is not under
// /tmp (a checkout may be). It is removed at the test's end.
func outsideTmp(t *testing.T) string {
	t.Helper()
	home, _ := os.UserHomeDir()
	for _, base := range []string{home, "."} {
		abs, err := filepath.Abs(base)
		if err != nil || base == "" || abs == "/tmp" || strings.HasPrefix(abs, "/tmp/") {
			continue
		}
		d, err := os.MkdirTemp(abs, "toolwire-outside-root-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	t.Skip("no writable directory outside /tmp to try a write in")
	return ""
}

// TestBashBigOutputMemory: ten calls printing 20 MB each at once cost this
// process far less than their output: past the capture bound the output is
// read and counted, not kept.
func TestBashBigOutputMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 200 MB through pipes")
	}
	if raceEnabled {
		// Seen at +66 MiB under the race detector, +27 MiB without.
		t.Skip("the race detector's shadow memory counts in the resident set; the plain run measures")
	}
	runtime.GC()
	idle := rssBytes(t)
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if r := rssBytes(t); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			res := bashUnder(t, sandbox.Policy{}, t.TempDir(), `head -c 20000000 /dev/zero | tr '\0' a`)
			if res.Cut == nil || res.Cut.Total != 20_000_000 {
				t.Errorf("cut %+v", res.Cut)
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	grew := peak.Load() - idle
	t.Logf("RSS idle %d MiB, peak %d MiB (+%d MiB) for ten 20 MB outputs", idle>>20, peak.Load()>>20, grew>>20)
	if grew > 64<<20 {
		t.Errorf("RSS grew by %d MiB, want at most 64", grew>>20)
	}
}

// rssBytes is this process's resident set size.
func rssBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
