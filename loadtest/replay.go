package loadtest

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// ReplayConfig says how Replay publishes an event log.
type ReplayConfig struct {
	// Speed scales the log's timing: an event at offset o is published at
	// o/Speed from the loop's start (default 1).
	Speed float64
	// Max publishes the events back to back, ignoring their offsets.
	Max bool
	// Loop replays the log this many times, one after the other, each time
	// with fresh turn ids (default 1).
	Loop int
	// NATS is the URL of a served pipeline; empty starts an embedded server
	// and a pipeline in the process, as Run does.
	NATS string
	// NATSOptions sign in to it (credentials, TLS).
	NATSOptions []nats.Option
	// Executors counts the in-process pipeline's executors (default 2).
	Executors int
	// Progress, when set, gets a live progress bar.
	Progress io.Writer
	// Plot, when set, is a directory (created if missing) that Replay
	// writes PNG charts of the replay into, as Config.Plot.
	Plot string
}

// ReplayReport is a replay's report: the same figures as a synthetic run
// (Report, and its JSON shape), and the call mix.
type ReplayReport struct {
	*Report
	// Mix counts the calls published per tool name.
	Mix map[string]int
}

// WriteSummary writes the report's summary and the call mix.
func (r *ReplayReport) WriteSummary(w io.Writer) error {
	if err := r.Report.WriteSummary(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "call mix      %s\n", r.MixString())
	return err
}

// MixString is the call mix as "name count" pairs, by name.
func (r *ReplayReport) MixString() string {
	var b strings.Builder
	for i, name := range slices.Sorted(maps.Keys(r.Mix)) {
		if i > 0 {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "%s %d", name, r.Mix[name])
	}
	return b.String()
}

// replayTurn is a recorded turn: its events in the log's order.
type replayTurn struct {
	tenant string
	events []LogEvent
	// calls is how many calls it has: the turn_end's count, or past the
	// highest seq.
	calls int
}

// Replay publishes the events of log (as ReadLog returns them) with their
// timing, each recorded turn under a fresh id per loop, reads every
// replayed turn's results as an agent does and reports them as Run does.
func Replay(ctx context.Context, c ReplayConfig, log []LogEvent) (*ReplayReport, error) {
	switch {
	case c.Speed < 0:
		return nil, &ConfigError{Field: "speed", Msg: fmt.Sprintf("must be positive, got %g", c.Speed)}
	case c.Speed > 0 && c.Max:
		return nil, &ConfigError{Field: "max", Msg: "give either --speed or --max, not both"}
	case c.Loop < 0:
		return nil, &ConfigError{Field: "loop", Msg: fmt.Sprintf("must be positive, got %d", c.Loop)}
	}
	if c.Speed == 0 {
		c.Speed = 1
	}
	if c.Loop == 0 {
		c.Loop = 1
	}
	if len(log) == 0 {
		return nil, fmt.Errorf("loadtest: replay: the event log is empty")
	}
	if c.Plot != "" {
		if err := preparePlotDir(c.Plot); err != nil {
			return nil, err
		}
	}
	log = slices.Clone(log)
	sort.SliceStable(log, func(i, j int) bool { return log[i].Offset < log[j].Offset })
	turns := map[string]*replayTurn{}
	maxConc := DefaultMaxConcurrency
	for _, e := range log {
		k := e.Meta.Tenant + "/" + e.Meta.Turn
		t := turns[k]
		if t == nil {
			t = &replayTurn{tenant: e.Meta.Tenant}
			turns[k] = t
		}
		t.events = append(t.events, e)
		switch d := e.Data.(type) {
		case *schemas.ToolUse:
			t.calls = max(t.calls, d.Seq+1)
			maxConc = max(maxConc, d.MaxConcurrency)
		case *schemas.TurnEnd:
			t.calls = max(t.calls, d.Calls)
		}
	}
	span := log[len(log)-1].Offset

	tg, err := startTarget(ctx, Config{NATS: c.NATS, NATSOptions: c.NATSOptions, Executors: max(c.Executors, 2), MaxConcurrency: DefaultMaxConcurrency})
	if err != nil {
		return nil, err
	}
	defer tg.close()
	js, err := jetstream.New(tg.nc)
	if err != nil {
		return nil, fmt.Errorf("loadtest: %w", err)
	}
	space := subjects.Default()
	clients := map[string]*client.Client{}
	for _, t := range turns {
		if clients[t.tenant] == nil {
			if clients[t.tenant], err = client.New(tg.nc, client.Config{Space: space, Tenant: t.tenant}); err != nil {
				return nil, fmt.Errorf("loadtest: %w", err)
			}
		}
	}

	ResetPeakRSS(0)
	before := tg.stageMsgs()
	mix := map[string]int{}
	want := time.Duration(float64(span)/c.Speed) * time.Duration(c.Loop)
	if c.Max {
		want = 0
	}
	b := newBar(c.Progress, "replay", max(want, time.Second))
	tick := b.tick("replay")
	start := time.Now()
	tl := newTally(maxConc, start, c.Plot != "")
	// Readers get until the publishing is over plus the drain time.
	rctx, cancelReaders := context.WithCancel(ctx)
	defer cancelReaders()
	var wg sync.WaitGroup
	stopTicking := ticker(start, tick, tl.progress)
	lastIdx := map[string]int{}
	for i, e := range log {
		lastIdx[e.Meta.Tenant+"/"+e.Meta.Turn] = i
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var open []chan struct{}
loops:
	for range c.Loop {
		t0 := time.Now()
		obs := map[string]*turnObs{}
		ids := map[string]string{}
		published := map[string]chan struct{}{}
		for i, e := range log {
			if !c.Max {
				if d := time.Until(t0.Add(time.Duration(float64(e.Offset) / c.Speed))); d > 0 {
					timer.Reset(d)
					select {
					case <-timer.C:
					case <-ctx.Done():
						timer.Stop()
						break loops
					}
				}
			}
			if ctx.Err() != nil {
				break loops
			}
			k := e.Meta.Tenant + "/" + e.Meta.Turn
			rt := turns[k]
			o, id := obs[k], ids[k]
			if o == nil {
				id = client.NewTurnID()
				o = &turnObs{pubAt: make([]time.Time, rt.calls), spec: turnSpec{safe: make([]bool, rt.calls)}}
				obs[k], ids[k] = o, id
				done := make(chan struct{})
				published[k] = done
				open = append(open, done)
				cl := clients[rt.tenant]
				// The reader hands o to the tally once the turn's last
				// event was published (done is closed).
				wg.Go(func() {
					readTurn(rctx, cl, id, o)
					<-done
					tl.add(o)
				})
			}
			at := time.Now()
			if err := publishEvent(ctx, js, space, e, id); err != nil {
				if o.err == nil {
					o.err = err
				}
			} else if u, ok := e.Data.(*schemas.ToolUse); ok {
				if u.Seq < len(o.pubAt) {
					o.pubAt[u.Seq] = at
				}
				mix[u.Name]++
			}
			if lastIdx[k] == i {
				close(published[k])
				open = slices.DeleteFunc(open, func(ch chan struct{}) bool { return ch == published[k] })
			}
		}
	}
	for _, ch := range open {
		close(ch)
	}
	// The turns in flight get the drain time; their missing results are
	// then lost.
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	drain := time.NewTimer(30 * time.Second)
	select {
	case <-finished:
	case <-drain.C:
		cancelReaders()
		<-finished
	case <-ctx.Done():
		<-finished
	}
	drain.Stop()
	stopTicking()
	b.finish()
	rep := tl.report()
	if tg.p != nil && rep.Calls > 0 {
		rep.StageMsgsPerCall = float64(tg.stageMsgs()-before) / float64(rep.Calls)
	}
	rep.RSSMiBMax = PeakRSSMiB(0)
	if err := ctx.Err(); err != nil || c.Plot == "" {
		return &ReplayReport{Report: rep, Mix: mix}, err
	}
	return &ReplayReport{Report: rep, Mix: mix}, rep.writePlots(c.Plot, "replay")
}

// readTurn reads a replayed turn's results into o; the results' safe flags
// stand for the turn's (the log does not say which calls are safe).
func readTurn(ctx context.Context, cl *client.Client, id string, o *turnObs) {
	for d, err := range cl.Results(ctx, id) {
		if err != nil {
			return
		}
		if d.Done != nil {
			o.doneAt = d.At
			return
		}
		r := d.Result
		if r.Seq >= 0 && r.Seq < len(o.spec.safe) {
			o.spec.safe[r.Seq] = r.Safe
		}
		o.deliveries = append(o.deliveries, delivery{seq: r.Seq, at: d.At, start: r.StartedAt, finish: r.FinishedAt, isError: r.IsError})
	}
}

// publishEvent publishes a recorded event under the replay's turn id, as
// the client does: the same subject, encoding and Nats-Msg-Id.
func publishEvent(ctx context.Context, js jetstream.JetStream, space subjects.Space, e LogEvent, turn string) error {
	tenant := e.Meta.Tenant
	meta := schemas.Meta{Source: e.Meta.Source, Tenant: tenant, Turn: turn, Seq: -1, TraceParent: e.Meta.TraceParent}
	var subject, msgID string
	switch d := e.Data.(type) {
	case *schemas.ToolUse:
		meta.Seq = d.Seq
		subject, msgID = space.In(tenant, turn, subjects.KindUse), subjects.UseMsgID(tenant, turn, d.Seq)
	case *schemas.TurnEnd:
		subject, msgID = space.In(tenant, turn, subjects.KindEnd), subjects.InMsgID(tenant, turn, subjects.KindEnd)
	case *schemas.TurnCancel:
		subject, msgID = space.In(tenant, turn, subjects.KindCancel), subjects.InMsgID(tenant, turn, subjects.KindCancel)
	case *schemas.TurnDiscard:
		subject, msgID = space.In(tenant, turn, subjects.KindDiscard), subjects.InMsgID(tenant, turn, subjects.KindDiscard)
	default:
		return fmt.Errorf("loadtest: replay: %s is not an input event", e.Data.EventType())
	}
	h, body, err := schemas.Encode(meta, e.Data)
	if err != nil {
		return fmt.Errorf("loadtest: replay: %w", err)
	}
	m := &nats.Msg{Subject: subject, Header: h, Data: body}
	// A full in stream slows the replay down, as it does the client.
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, 500*time.Millisecond) {
		_, err := js.PublishMsg(ctx, m, jetstream.WithMsgID(msgID))
		switch {
		case err == nil:
			return nil
		case !jserr.Full(err):
			return fmt.Errorf("loadtest: replay: publish %s: %w", subject, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("loadtest: replay: publish %s: %w", subject, err)
		case <-time.After(pause):
		}
	}
}
