package builtin

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin/bashsafe"
	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

const (
	// BashDefaultTimeout bounds a Bash call that does not ask for a timeout.
	BashDefaultTimeout = 120 * time.Second
	// BashMaxTimeout is the largest timeout a Bash call may ask for.
	BashMaxTimeout = 600 * time.Second
	// BashMaxResultChars is the model-facing cap of a Bash result.
	BashMaxResultChars = 30_000

	// bashMaxCapture bounds the output held in memory; the executor cuts
	// the content to BashMaxResultChars and stores what was kept as the
	// blob. Past it the output is read and counted, not kept: ten calls
	// printing 20 MB each then cost the executor tens of MiB, not
	// hundreds (each kept byte is copied a few times on its way out).
	bashMaxCapture = 1 << 20
)

const bashDescription = `Runs a bash command and returns its combined stdout and stderr.

- The command runs in the working directory of the turn; a cd inside it does not carry over to later calls.
- Quote paths that contain spaces.
- timeout is in milliseconds (default 120000, at most 600000); on timeout the command and everything it started are killed.
- A non-zero exit code is an error, except where the command uses it for an answer: exit 1 of grep or rg (no match), of diff or cmp (files differ) and of find.
- Output beyond 30000 characters is truncated.
- Prefer the Read tool to cat, head and tail for reading files.`

const bashSchema = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The command to run."},
    "timeout": {"type": "integer", "minimum": 1, "maximum": 600000, "description": "Optional timeout in milliseconds (at most 600000)."},
    "description": {"type": "string", "description": "A short description of what the command does, in 5-10 words."}
  },
  "required": ["command"],
  "additionalProperties": false
}`

// bashInput is the input of a Bash call.
type bashInput struct {
	Command     string `json:"command"`
	Timeout     int64  `json:"timeout,omitempty"` // milliseconds
	Description string `json:"description,omitempty"`
}

// timeout is the call's timeout: the one it asks for, within bounds, or
// the default.
func (in bashInput) timeout() time.Duration {
	if in.Timeout <= 0 {
		return BashDefaultTimeout
	}
	return min(time.Duration(in.Timeout)*time.Millisecond, BashMaxTimeout)
}

// Bash returns the Bash tool with the default sandbox policy: the
// environment cut to sandbox.BaseEnv, the default limits, writes confined
// to the turn's directory and the network off with Landlock where the
// kernel offers it, else with bubblewrap where it is installed.
func Bash() *tool.Tool { return BashWith(sandbox.Policy{}) }

// BashWith returns the Bash tool under policy. A call is concurrency-safe
// and read-only exactly when bashsafe classifies its command as read-only;
// an error cancels the turn's other calls (a failing command usually makes
// the rest of an implicit chain pointless), and a user interrupt stops it.
func BashWith(policy sandbox.Policy) *tool.Tool {
	r := bashRunner{maxCapture: bashMaxCapture, contain: sync.OnceValue(policy.Containment)}
	return tool.MustBuild(tool.Definition{
		Name:            "Bash",
		Description:     bashDescription,
		InputSchema:     json.RawMessage(bashSchema),
		Call:            r.call,
		ConcurrencySafe: bashPredicate(bashsafe.IsReadOnly),
		ReadOnly:        bashPredicate(bashsafe.IsReadOnly),
		Destructive:     bashPredicate(bashsafe.IsDestructive),
		CancelsSiblings: true,
		Interrupt:       tool.InterruptCancel,
		MaxResultChars:  BashMaxResultChars,
		Timeout:         BashDefaultTimeout,
		CallTimeout: func(input json.RawMessage) time.Duration {
			var in bashInput
			if decodeInput(input, &in) != nil {
				return 0
			}
			return in.timeout()
		},
	})
}

// bashPredicate applies a judgement on the command to a call's input.
func bashPredicate(judge func(command string) bool) tool.Predicate {
	return func(input json.RawMessage) (bool, error) {
		var in bashInput
		if err := decodeInput(input, &in); err != nil {
			return false, err
		}
		return judge(in.Command), nil
	}
}

// call is the Bash tool's CallFunc.
func (r bashRunner) call(ctx context.Context, input json.RawMessage, tc tool.TurnContext, _ tool.Progress) (tool.Result, error) {
	var in bashInput
	if err := decodeInput(input, &in); err != nil {
		return tool.Result{Content: err.Error(), IsError: true}, nil
	}
	if in.Command == "" {
		return tool.Result{Content: "command is empty", IsError: true}, nil
	}
	return r.run(ctx, in.Command, tc.WorkDir, tc.IdempotencyKey, in.timeout())
}
