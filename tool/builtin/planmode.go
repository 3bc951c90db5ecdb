package builtin

import (
	"context"
	"encoding/json"

	"github.com/toolwire/toolwire/tool"
)

const noInputSchema = `{"type": "object", "properties": {}, "additionalProperties": false}`

// EnterPlanMode returns the tool that switches the turn to plan mode, in
// which every call that is not read-only is denied. It changes the turn
// context, so it is not concurrency-safe: the calls after it see the mode.
func EnterPlanMode() *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Name:        "EnterPlanMode",
		Description: "Switch to plan mode: explore and plan without changing anything. Calls that are not read-only are denied until ExitPlanMode.",
		InputSchema: json.RawMessage(noInputSchema),
		Call:        setMode(tool.ModePlan, "Entered plan mode: calls that change anything will be denied until ExitPlanMode."),
	})
}

// ExitPlanMode returns the tool that leaves plan mode.
func ExitPlanMode() *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Name:            "ExitPlanMode",
		Description:     "Leave plan mode and return to the default permission mode.",
		InputSchema:     json.RawMessage(noInputSchema),
		Call:            setMode(tool.ModeDefault, "Left plan mode."),
		PlanModeAllowed: true,
	})
}

func setMode(mode, text string) tool.CallFunc {
	return func(context.Context, json.RawMessage, tool.TurnContext, tool.Progress) (tool.Result, error) {
		m := mode
		return tool.Result{Content: text, Context: &tool.ContextChange{PermissionMode: &m}}, nil
	}
}
