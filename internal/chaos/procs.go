package chaos

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolwire/toolwire/loadtest"
)

// proc is one `toolwire serve` process of the run: it can be killed with
// SIGKILL and started again with the same arguments (and so the same
// store, for a NATS node).
type proc struct {
	name string
	bin  string
	args []string
	logs string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	peakMiB float64
	starts  int
}

func newProc(bin, dir, name string, args ...string) *proc {
	return &proc{name: name, bin: bin, args: append([]string{"serve"}, args...), logs: filepath.Join(dir, name+".log")}
}

// start runs the process; its stdout and stderr go to its log file.
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.OpenFile(p.logs, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.Command(p.bin, p.args...)
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group: a SIGINT to the run (Ctrl-C) reaches the
	// processes only through stop, in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("chaos: start %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.cmd, p.exited = cmd, exited
	p.starts++
	return nil
}

// pid is the running process's id, 0 when none runs.
func (p *proc) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	select {
	case <-p.exited:
		return 0
	default:
		return p.cmd.Process.Pid
	}
}

// sample records the process's peak resident set so far.
func (p *proc) sample() {
	if pid := p.pid(); pid != 0 {
		mib := loadtest.PeakRSSMiB(pid)
		p.mu.Lock()
		p.peakMiB = max(p.peakMiB, mib)
		p.mu.Unlock()
	}
}

// end sends sig and waits for the process to exit, sending SIGKILL after
// grace (0: none); it returns the ended pid, 0 when none ran. The peak
// resident set is read first, while the process still has one.
func (p *proc) end(sig syscall.Signal, grace time.Duration) int {
	p.sample()
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return 0
	}
	_ = cmd.Process.Signal(sig)
	if grace > 0 {
		select {
		case <-exited:
		case <-time.After(grace):
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	<-exited
	return cmd.Process.Pid
}

// kill sends SIGKILL and waits until the process is gone; it returns the
// killed pid.
func (p *proc) kill() int { return p.end(syscall.SIGKILL, 0) }

// stop asks the process to drain (SIGTERM) and kills it after grace.
func (p *proc) stop(grace time.Duration) { p.end(syscall.SIGTERM, grace) }

// dump makes a Go process print every goroutine's stack to its log
// (SIGQUIT) and exit: what a stuck stage was waiting for.
func (p *proc) dump() { p.end(syscall.SIGQUIT, 5*time.Second) }

// died reports whether the process exited without being killed by the run.
func (p *proc) died() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// lastLines is the end of the process's log, for an error message.
func (p *proc) lastLines(n int) string {
	b, _ := os.ReadFile(p.logs)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// freePorts returns n TCP ports of the loopback address that were free a
// moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("chaos: a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// topology is the run's processes: three NATS nodes forming a JetStream
// cluster, and the stages in processes of their own, joined to it.
type topology struct {
	nodes, executors, reorders []*proc
	router                     *proc
	urls                       string
}

func newTopology(bin, dir string, executors, reorders int) (*topology, error) {
	ports, err := freePorts(6)
	if err != nil {
		return nil, err
	}
	var routes, urls []string
	for i := range 3 {
		routes = append(routes, "nats://127.0.0.1:"+strconv.Itoa(ports[3+i]))
		urls = append(urls, "nats://127.0.0.1:"+strconv.Itoa(ports[i]))
	}
	t := &topology{urls: strings.Join(urls, ",")}
	for i := range 3 {
		name := fmt.Sprintf("nats-%d", i+1)
		t.nodes = append(t.nodes, newProc(bin, dir, name, "--cluster", "toolwire-chaos", "--server-name", name,
			"--listen", "127.0.0.1:"+strconv.Itoa(ports[i]), "--cluster-listen", "127.0.0.1:"+strconv.Itoa(ports[3+i]),
			"--routes", strings.Join(routes, ","), "--store", filepath.Join(dir, name), "--stages", "none", "--http", "", "--nats-logs"))
	}
	stage := func(name string, args ...string) *proc {
		return newProc(bin, dir, name, append([]string{"--nats", t.urls, "--http", "", "--test-tools"}, args...)...)
	}
	t.router = stage("router", "--stages", "router")
	for i := range executors {
		t.executors = append(t.executors, stage(fmt.Sprintf("executor-%d", i+1), "--stages", "executor", "--executors", "1",
			"--workdir", filepath.Join(dir, "work")))
	}
	for i := range reorders {
		t.reorders = append(t.reorders, stage(fmt.Sprintf("reorder-%d", i+1), "--stages", "reorder", "--reorders", "1"))
	}
	return t, nil
}

func (t *topology) all() []*proc {
	return append(append(append(append([]*proc{}, t.nodes...), t.router), t.executors...), t.reorders...)
}

// stop drains the stages, then the nodes.
func (t *topology) stop() {
	var wg sync.WaitGroup
	for _, p := range t.all()[3:] {
		wg.Go(func() { p.stop(15 * time.Second) })
	}
	wg.Wait()
	for _, p := range t.nodes {
		wg.Go(func() { p.stop(15 * time.Second) })
	}
	wg.Wait()
}

// lastElection is when the last stream or consumer leader was elected,
// by the nodes' logs, in the window after at: how long the cluster itself
// took to fail over. Zero when the logs say nothing.
func (t *topology) lastElection(at time.Time, window time.Duration) time.Time {
	var last time.Time
	for _, p := range t.nodes {
		b, err := os.ReadFile(p.logs)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, "JetStream cluster new stream leader") && !strings.Contains(line, "JetStream cluster new consumer leader") {
				continue
			}
			// "[pid] 2006/01/02 15:04:05.000000 [INF] ..."
			f := strings.Fields(line)
			if len(f) < 3 {
				continue
			}
			ts, err := time.ParseInLocation("2006/01/02 15:04:05.000000", f[1]+" "+f[2], time.Local)
			if err == nil && ts.After(at) && ts.Before(at.Add(window)) && ts.After(last) {
				last = ts
			}
		}
	}
	return last
}
