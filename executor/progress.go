package executor

import (
	"context"

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

// progress returns the callback a tool reports progress through.
func (e *Executor) progress(ctx context.Context, c *call) tool.Progress {
	return func(text string) { e.publishProgress(ctx, c, text) }
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
