// Package testtools holds tools for exercising the pipeline itself, with
// behaviour a test can dictate through the input: Noop and Sleep. They are
// registered only when asked for (--test-tools).
package testtools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolwire/toolwire/tool"
)

// SleepMaxMillis is the longest a Sleep call may sleep.
const SleepMaxMillis = 600_000

// Tools returns the test tools, sorted by name.
func Tools() []*tool.Tool {
	return []*tool.Tool{Chdir(), Noop(), Sleep()}
}

// Noop returns the Noop tool: safe, read-only, and answers with its input.
func Noop() *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Name:            "Noop",
		Description:     "Does nothing and returns its input as compact JSON. For testing.",
		InputSchema:     json.RawMessage(`{"type":"object"}`),
		Call:            noop,
		ConcurrencySafe: tool.Always,
		ReadOnly:        tool.Always,
	})
}

func noop(_ context.Context, input json.RawMessage, _ tool.TurnContext, _ tool.Progress) (tool.Result, error) {
	if len(input) == 0 {
		return tool.Result{Content: "{}"}, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, input); err != nil {
		return tool.Result{Content: "input is not JSON: " + err.Error(), IsError: true}, nil
	}
	return tool.Result{Content: b.String()}, nil
}

// sleepInput is the input of a Sleep call.
type sleepInput struct {
	Ms   int64 `json:"ms"`
	Safe bool  `json:"safe"`
	Fail bool  `json:"fail"`
}

// Sleep returns the Sleep tool: it sleeps ms milliseconds, is
// concurrency-safe and read-only exactly when safe is true, and ends with an
// error result when fail is true.
func Sleep() *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Name:        "Sleep",
		Description: "Sleeps for ms milliseconds, then succeeds, or fails when fail is true. It may run beside other calls only when safe is true. For testing.",
		InputSchema: json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "ms": {"type": "integer", "minimum": 0, "maximum": %d, "description": "How long to sleep, in milliseconds."},
    "safe": {"type": "boolean", "description": "Whether the call is concurrency-safe and read-only."},
    "fail": {"type": "boolean", "description": "Whether the call ends with an error result."}
  },
  "required": ["ms"],
  "additionalProperties": false
}`, SleepMaxMillis)),
		Call:            sleep,
		ConcurrencySafe: sleepSafe,
		ReadOnly:        sleepSafe,
	})
}

func sleepSafe(input json.RawMessage) (bool, error) {
	var in sleepInput
	if err := json.Unmarshal(input, &in); err != nil {
		return false, fmt.Errorf("sleep input: %w", err)
	}
	return in.Safe, nil
}

func sleep(ctx context.Context, input json.RawMessage, _ tool.TurnContext, _ tool.Progress) (tool.Result, error) {
	var in sleepInput
	if err := json.Unmarshal(input, &in); err != nil {
		return tool.Result{Content: "invalid input: " + err.Error(), IsError: true}, nil
	}
	ms := min(max(in.Ms, 0), SleepMaxMillis)
	start := time.Now()
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return tool.Result{}, fmt.Errorf("sleep cancelled after %d ms: %w", time.Since(start).Milliseconds(), ctx.Err())
	case <-t.C:
	}
	if in.Fail {
		return tool.Result{Content: fmt.Sprintf("sleep failed as asked after %d ms", ms), IsError: true}, nil
	}
	return tool.Result{Content: fmt.Sprintf("slept %d ms", ms)}, nil
}
