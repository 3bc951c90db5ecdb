package client

import "github.com/toolwire/toolwire/schemas"

// Progress calls fn with each of a turn's progress events as they happen
// (completion order, best effort) until stop is called: a tool's own lines
// while it runs, and a line as each call finishes. It is subscribed when
// it returns, so call it before submitting: progress is not stored. fn
// runs on the subscription's goroutine and must not block. stop returns
// once fn has had the events the connection already received (waiting at
// most a second), so stopping at turn_done keeps every line published
// before the turn's last result.
func (c *Client) Progress(turn string, fn func(*schemas.ToolProgress)) (stop func(), err error) {
	return subscribe(c, "progress", turn, c.cfg.Space.Progress(c.cfg.Tenant, turn), fn)
}
