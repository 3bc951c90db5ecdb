package executor

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/schemas"
)

// DefaultAdTTL is how long a tool advertisement outlives its worker.
const DefaultAdTTL = 10 * time.Second

// advertise keeps this worker's tools in TW_TOOLS while ctx lives, each
// under its own key with a TTL refreshed at a third of it, and removes them
// when it ends, so the router stops routing to a pool with no live worker
// at once on a clean stop and within the TTL after a crash.
func (e *Executor) advertise(ctx context.Context) {
	ttl := e.cfg.AdTTL
	put := func() {
		for _, t := range e.cfg.Tools.Tools() {
			ad := &schemas.ToolAd{
				Name: t.Name(), Description: t.Description(), InputSchema: schemas.RawJSON(t.InputSchema()),
				Pool: e.cfg.Pool, Worker: e.cfg.WorkerID, CancelsSiblings: t.CancelsSiblings(),
			}
			b, err := schemas.EncodeToolAd(ad)
			if err != nil {
				continue
			}
			m := nats.NewMsg(e.cfg.Space.ToolSubject(e.cfg.Pool, t.Name(), e.cfg.WorkerID))
			m.Data = b
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if _, err := e.js.PublishMsg(pctx, m, jetstream.WithMsgTTL(ttl)); err != nil && ctx.Err() == nil {
				e.cfg.Log.Warn("executor: advertising tools", "tool", t.Name(), "err", err)
			}
			cancel()
		}
	}
	put()
	tk := time.NewTicker(ttl / 3)
	defer tk.Stop()
	for {
		select {
		case <-tk.C:
			put()
		case <-ctx.Done():
			e.withdraw()
			return
		}
	}
}

// withdraw removes this worker's advertisements.
func (e *Executor) withdraw() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	kv, err := e.js.KeyValue(ctx, e.cfg.Space.ToolsBucket())
	if err != nil {
		return
	}
	for _, t := range e.cfg.Tools.Tools() {
		_ = kv.Purge(ctx, e.cfg.Space.ToolKey(e.cfg.Pool, t.Name(), e.cfg.WorkerID))
	}
}
