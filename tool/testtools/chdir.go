package testtools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolwire/toolwire/tool"
)

const chdirSchema = `{
  "type": "object",
  "properties": {
    "dir": {"type": "string", "description": "The working directory to switch the turn to."},
    "ms": {"type": "integer", "minimum": 0, "maximum": 600000, "description": "Milliseconds to wait before switching."},
    "safe": {"type": "boolean", "description": "Whether the call may run beside others."}
  },
  "required": ["dir"],
  "additionalProperties": false
}`

type chdirInput struct {
	Dir  string `json:"dir"`
	MS   int    `json:"ms"`
	Safe bool   `json:"safe"`
}

// Chdir returns a test tool that waits, then changes the turn's working
// directory through a context modifier and reports the directory it ran in.
// It is as concurrency-safe as its input says, which lets tests make
// concurrent batches whose changes finish in any order.
func Chdir() *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Name:        "Chdir",
		Description: "Test tool: after ms milliseconds, switch the turn's working directory to dir.",
		InputSchema: json.RawMessage(chdirSchema),
		ConcurrencySafe: func(input json.RawMessage) (bool, error) {
			var in chdirInput
			err := json.Unmarshal(input, &in)
			return in.Safe, err
		},
		Call: func(ctx context.Context, input json.RawMessage, tc tool.TurnContext, _ tool.Progress) (tool.Result, error) {
			var in chdirInput
			if err := json.Unmarshal(input, &in); err != nil {
				return tool.Result{}, err
			}
			t := time.NewTimer(time.Duration(in.MS) * time.Millisecond)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return tool.Result{}, ctx.Err()
			}
			dir := in.Dir
			return tool.Result{
				Content: fmt.Sprintf("ran in %s (context version %d); switching to %s", tc.WorkDir, tc.Version, dir),
				Context: &tool.ContextChange{WorkDir: &dir},
			}, nil
		},
	})
}
