package executor

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool"
)

// activity names a call for people: Bash(ls -la).
func activity(c *call) string {
	if c.t != nil {
		return c.t.Activity(c.input())
	}
	return tool.DefaultActivity(c.d.Tool, c.input())
}

// finishedLineAfter is how long a call runs before its end gets a progress
// line of its own. A quicker call's result follows at once and says all
// the line would: nobody watching sees the difference, and the line would
// be one more message on the hot path of every call.
const finishedLineAfter = 100 * time.Millisecond

// progress returns the callback a tool reports progress through; reported
// is set once the tool has reported anything.
func (e *Executor) progress(ctx context.Context, c *call, reported *atomic.Bool) tool.Progress {
	return func(text string) {
		reported.Store(true)
		e.publishProgress(ctx, c, text)
	}
}

// publishFinished sends the line that ends a call's progress, for a call
// that reported progress or ran long enough to be watched.
func (e *Executor) publishFinished(ctx context.Context, c *call, reported bool, took time.Duration) {
	if !reported && took < finishedLineAfter {
		return
	}
	e.publishProgress(ctx, c, fmt.Sprintf("%s finished in %s", activity(c), took.Round(time.Millisecond)))
}

// publishProgress sends a progress line on the turn's progress subject. It
// is core NATS, best effort and in completion order: progress is for
// people watching, and must never slow a call down.
func (e *Executor) publishProgress(_ context.Context, c *call, text string) {
	h, body, err := schemas.Encode(schemas.Meta{Source: e.cfg.Source, Tenant: c.p.Tenant, Turn: c.p.Turn, Seq: c.d.Seq},
		&schemas.ToolProgress{Seq: c.d.Seq, Text: text})
	if err != nil {
		return
	}
	_ = e.nc.PublishMsg(&nats.Msg{Subject: e.cfg.Space.Progress(c.p.Tenant, c.p.Turn), Header: h, Data: body})
}
