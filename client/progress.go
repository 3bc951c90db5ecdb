package client

import "github.com/toolwire/toolwire/schemas"

// Progress calls fn with each of a turn's progress events as they happen
// (completion order, best effort) until stop is called: a tool's own lines
// while it runs, and a line as each call finishes. It is subscribed when
// it returns, so call it before submitting: progress is not stored. fn
// runs on the subscription's goroutine and must not block; a call of fn
// under way when stop is called may still finish after stop returns.
func (c *Client) Progress(turn string, fn func(*schemas.ToolProgress)) (stop func(), err error) {
	return subscribe(c, "progress", turn, c.cfg.Space.Progress(c.cfg.Tenant, turn), fn)
}
