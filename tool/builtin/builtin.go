// Package builtin holds the tools every toolwire executor can host: Bash,
// Read, and EnterPlanMode/ExitPlanMode, which switch the turn's permission
// mode through a context change.
package builtin

import (
	"encoding/json"
	"fmt"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

// Tools returns the built-in tools, sorted by name, Bash under the default
// sandbox policy.
func Tools() []*tool.Tool { return ToolsWith(sandbox.Policy{}) }

// ToolsWith returns the built-in tools, sorted by name, Bash under bash.
func ToolsWith(bash sandbox.Policy) []*tool.Tool {
	return []*tool.Tool{BashWith(bash), Edit(), EnterPlanMode(), ExitPlanMode(), Glob(), Grep(), Read(), Write()}
}

// decodeInput unmarshals a call's input; the executor has validated it
// against the schema already, so a failure here means a caller skipped that.
func decodeInput(input json.RawMessage, v any) error {
	if err := json.Unmarshal(input, v); err != nil {
		return fmt.Errorf("invalid input: %w", err)
	}
	return nil
}
