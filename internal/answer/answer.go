// Package answer builds the error result with which a stage answers a call
// in its tool's place: the router a call it will not dispatch, the executor
// a call it does not run or that the turn stopped, the reorder a result
// that is missing or bad. Every such result is built here, so none misses
// the sanitizer.
package answer

import (
	"time"

	"github.com/toolwire/toolwire/sanitizer"
	"github.com/toolwire/toolwire/schemas"
)

// Error is the error result of call seq (its tool_use id and tool name as
// known) saying text — usually one of internal/texts — sanitized and
// wrapped like every error the model reads. It is given by worker, started
// and finished at at (in UTC). What else a stage records (the attempt, the
// safe flag, the batch, late) it sets on the result.
func Error(seq int, id, name, worker, text string, at time.Time) *schemas.ToolResult {
	at = at.UTC()
	return &schemas.ToolResult{
		Seq: seq, ToolUseID: id, Name: name, IsError: true,
		Content:   sanitizer.Error(text, sanitizer.Options{}),
		StartedAt: at, FinishedAt: at, Worker: worker,
	}
}
