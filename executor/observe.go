package executor

import (
	"time"

	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/subjects"
)

// Outcomes of calls answered other than by their tool's result, for the
// hooks (stage.CallEvent).
const (
	outcomeCancelled = "cancelled" // halted or stopped by its turn
	outcomeRejected  = "rejected"  // refused: permission, plan mode, tool not hosted
)

// park tells the hooks that c waits for its turn's start rule, the first
// time it does.
func (e *Executor) park(c *call) {
	if !c.parked.IsZero() {
		return
	}
	c.parked, c.waiting = time.Now(), true
	e.cfg.Hooks.OnParked(c.p.Tenant, 1)
}

// unpark tells the hooks that c, if it was parked, waits no more.
func (e *Executor) unpark(c *call) {
	if c.waiting {
		c.waiting = false
		e.cfg.Hooks.OnParked(c.p.Tenant, -1)
	}
}

// started tells the hooks that c was claimed to run at, with how long it
// waited for that when it was parked.
func (e *Executor) started(c *call, at time.Time) {
	var waited time.Duration
	if !c.parked.IsZero() {
		waited = max(at.Sub(c.received), 0)
	}
	e.cfg.Hooks.OnStarted(stage.CallEvent{Stage: subjects.StageExecutor, Tenant: c.p.Tenant, Tool: c.d.Tool, Waited: waited})
}
