package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/toolwire/toolwire/loadtest"
)

// Result is a run's report and what it was measured on.
type Result struct {
	// Report is in synth's shape; its rss_mib_max is the Temporal server
	// process's peak.
	Report *loadtest.Report
	// Version is the CLI's and its embedded server's versions.
	Version string
	// PeakReset says the server's peak RSS was reset at the start of the
	// measured run; when false it is the peak since the server started.
	PeakReset bool
	// DriverRSSMiB is this process's peak RSS over the run (the driver,
	// the client and the worker), which the JSON does not carry.
	DriverRSSMiB float64
	// ServerCPU and DriverCPU are the CPU time the server and this process
	// used over the measured run, which the JSON does not carry.
	ServerCPU, DriverCPU time.Duration
	// Config is the run's, defaults and tuning filled in.
	Config Config
}

// Run starts a dev server, a client and a worker, runs one warm-up turn,
// then the workload of c, and stops them. Log, when set, gets progress
// and the slow turns.
func Run(ctx context.Context, c Config, log io.Writer) (*Result, error) {
	c, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	sc := c.Server
	sc.Log = log
	sc.DynamicConfig = append(c.Worker.serverDynamicConfig(), sc.DynamicConfig...)
	srv, err := StartServer(ctx, sc)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	cl, err := client.DialContext(ctx, client.Options{HostPort: srv.Addr, Logger: quietLogger(log)})
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", srv.Addr, err)
	}
	defer cl.Close()
	wk, err := startWorker(cl, c.Worker)
	if err != nil {
		return nil, err
	}
	defer wk.Stop()
	d := &driver{c: cl, cfg: c, runID: strconv.FormatInt(time.Now().UnixNano(), 36)}
	if c.SlowTurn > 0 {
		d.slow = &slowLog{over: c.SlowTurn, w: cmp.Or(c.SlowLog, log)}
	}
	// One turn first, unmeasured: the task queue, the pollers and the
	// namespace caches exist before the clock starts, as synth's pipeline
	// is up before its run starts.
	warm := *d
	warm.runID += "-warmup"
	wctx, cancel := context.WithTimeout(ctx, Drain)
	o := warm.runTurn(wctx, 0)
	cancel()
	if o.err != nil {
		return nil, fmt.Errorf("warm-up turn: %w", o.err)
	}
	res := &Result{Version: srv.Version, PeakReset: loadtest.ResetPeakRSS(srv.PID()), Config: c}
	loadtest.ResetPeakRSS(0)
	srvCPU, ownCPU := cpuTime(srv.PID()), cpuTime(0)
	res.Report = d.drive(ctx, log)
	res.ServerCPU, res.DriverCPU = cpuTime(srv.PID())-srvCPU, cpuTime(0)-ownCPU
	res.Report.RSSMiBMax = loadtest.PeakRSSMiB(srv.PID())
	res.DriverRSSMiB = loadtest.PeakRSSMiB(0)
	return res, nil
}
