package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/subjects"
)

// startAll starts the nodes, waits for the cluster's JetStream, starts the
// stages, and waits until a turn goes through and every executor pulls.
func (r *run) startAll(ctx context.Context) error {
	for _, p := range r.top.nodes {
		if err := p.start(); err != nil {
			return err
		}
	}
	nc, err := nats.Connect(r.top.urls, nats.Name("toolwire-chaos"), nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond), nats.RetryOnFailedConnect(true))
	if err != nil {
		return fmt.Errorf("chaos: connect: %w", err)
	}
	r.nc = nc
	if r.js, err = jetstream.New(nc); err != nil {
		return err
	}
	r.logf("nodes started; waiting for the cluster")
	if err := r.until(ctx, 90*time.Second, "the cluster's JetStream to answer", func() bool {
		_, err := r.js.AccountInfo(ctx)
		return err == nil
	}); err != nil {
		return err
	}
	for _, p := range r.top.all()[3:] {
		if err := p.start(); err != nil {
			return err
		}
	}
	if r.cl, err = client.New(nc, client.Config{Space: r.sp}); err != nil {
		return err
	}
	r.logf("stages started; waiting for a first turn")
	probe := client.NewTurnID()
	err = r.until(ctx, 120*time.Second, "a first turn to complete", func() bool {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if r.cl.SubmitCalls(pctx, probe, []client.Call{{Name: "Sleep", Input: json.RawMessage(`{"ms":1,"safe":true}`)}}, client.TurnOptions{}) != nil {
			return false
		}
		for d, err := range r.cl.Results(pctx, probe) {
			if err != nil {
				return false
			}
			if d.Done != nil {
				return true
			}
		}
		return false
	})
	if err != nil {
		return err
	}
	return r.until(ctx, 60*time.Second, "every executor to pull", func() bool {
		cons, err := r.js.Consumer(ctx, r.sp.ExecStream(), r.sp.ExecConsumer(subjects.DefaultPool))
		if err != nil {
			return false
		}
		info, err := cons.Info(ctx)
		return err == nil && info.NumWaiting >= len(r.top.executors)
	})
}

// until polls ok until it holds, for at most limit.
func (r *run) until(ctx context.Context, limit time.Duration, what string, ok func() bool) error {
	deadline := time.Now().Add(limit)
	for !ok() {
		for _, p := range r.top.all() {
			if p.died() {
				return fmt.Errorf("chaos: %s exited while waiting for %s:\n%s", p.name, what, p.lastLines(20))
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("chaos: gave up waiting for %s after %s", what, limit)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return nil
}

// load runs the workload, the kills and the malformed events, and then
// checks what came out.
func (r *run) load(ctx context.Context) (*Report, error) {
	sub, err := r.nc.Subscribe(r.sp.LeaseChangesDestination(), r.obs.lease)
	if err != nil {
		return nil, err
	}
	_ = sub.SetPendingLimits(-1, -1)
	defer sub.Unsubscribe()
	start := time.Now()
	stopAt := start.Add(r.cfg.Duration)
	drainUntil := stopAt.Add(drain)
	var wg sync.WaitGroup
	waited := 0
	if r.cfg.Rate > 0 {
		wg.Go(func() { waited = driveOpen(ctx, r.cl, r.obs, r.cfg.Rate, r.cfg.MaxInFlight, stopAt, drainUntil) })
	} else {
		for i := range r.cfg.Concurrency {
			wg.Go(func() { drive(ctx, r.cl, r.obs, uint64(i+1), stopAt, drainUntil) })
		}
	}
	sampling, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	go r.sample(sampling)
	sent := 0
	var inj sync.WaitGroup
	inj.Go(func() { sent = inject(ctx, r.js, r.sp, r.cfg.Malformed, stopAt, r.finishedTurn) })
	r.schedule(ctx, start, stopAt)
	wg.Wait()
	inj.Wait()
	r.logf("load done; auditing")
	stopSampling()
	for _, p := range r.top.all() {
		p.sample()
	}
	rep, err := r.report(ctx, sent)
	if rep != nil {
		rep.Waited = waited
	}
	return rep, err
}

// sample reads every process's peak resident set four times a second.
func (r *run) sample(ctx context.Context) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, p := range r.top.all() {
				p.sample()
			}
		}
	}
}

// finishedTurn is a turn of the run that has completed, for the i-th
// malformed event, a call after its turn's end; "" before one has. The
// turns are spread over all that completed, old (their leases expired) and
// recent (their leases still there): the two paths a late call can take.
func (r *run) finishedTurn(i int) string {
	r.obs.mu.Lock()
	defer r.obs.mu.Unlock()
	if len(r.obs.done) == 0 {
		return ""
	}
	return r.obs.done[(i*7919)%len(r.obs.done)]
}

// schedule kills an executor every KillEvery (round robin) and restarts it
// at once; halfway between two of those, once each: the router, a NATS
// node (restarted after NodeDown) and a reorder.
func (r *run) schedule(ctx context.Context, start, stopAt time.Time) {
	n := int(r.cfg.Duration / r.cfg.KillEvery)
	special := map[int]func(){
		0:     func() { r.restart(r.top.router) },
		n / 2: r.killNode,
		n - 1: func() { r.restart(r.top.reorders[0]) },
	}
	if n < 3 {
		special = map[int]func(){0: r.killNode}
	}
	for k := 0; ; k++ {
		half := start.Add(time.Duration(k)*r.cfg.KillEvery + r.cfg.KillEvery/2)
		if !half.Before(stopAt) || !sleepUntil(ctx, half) {
			return
		}
		if f := special[k]; f != nil {
			f()
		}
		next := start.Add(time.Duration(k+1) * r.cfg.KillEvery)
		if !next.Before(stopAt) || !sleepUntil(ctx, next) {
			return
		}
		r.killExecutor(r.top.executors[k%len(r.top.executors)])
	}
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(t)):
		return true
	}
}

func (r *run) killExecutor(p *proc) {
	pid := p.kill()
	at := time.Now()
	calls := r.obs.onWorker(pid)
	r.mu.Lock()
	r.kills = append(r.kills, kill{pid: pid, at: at, calls: calls})
	r.mu.Unlock()
	r.logf("killed %s (pid %d): %d calls to pick up", p.name, pid, len(calls))
	if err := p.start(); err != nil {
		r.logf("%v", err)
	}
}

func (r *run) restart(p *proc) {
	pid := p.kill()
	r.mu.Lock()
	r.kills = append(r.kills, kill{pid: pid, at: time.Now()})
	r.mu.Unlock()
	r.logf("killed %s (pid %d)", p.name, pid)
	if err := p.start(); err != nil {
		r.logf("%v", err)
	}
}

func (r *run) killNode() {
	p := r.top.nodes[0]
	at := time.Now()
	turns := r.obs.inFlight(at)
	pid := p.kill()
	r.mu.Lock()
	r.kills = append(r.kills, kill{pid: pid, at: at})
	r.nodeKills = append(r.nodeKills, nodeKill{at: at, turns: turns})
	r.mu.Unlock()
	r.logf("killed %s (pid %d) with %d turns in flight; back in %s", p.name, pid, len(turns), r.cfg.NodeDown)
	time.AfterFunc(r.cfg.NodeDown, func() {
		if err := p.start(); err != nil {
			r.logf("%v", err)
			return
		}
		r.logf("restarted %s", p.name)
	})
}
