package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// --- identity and discovery ---

// Name is the tool's canonical name.
func (t *Tool) Name() string { return t.def.Name }

// Aliases are other names that resolve to this tool.
func (t *Tool) Aliases() []string { return t.def.Aliases }

// SearchHint is the capability phrase ToolSearch matches, "" when none.
func (t *Tool) SearchHint() string { return t.def.SearchHint }

// IsEnabled reports whether the tool is offered; an Enabled func that
// panics counts as disabled.
func (t *Tool) IsEnabled() (ok bool) {
	if t.def.Enabled == nil {
		return true
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return t.def.Enabled()
}

// Deferred reports whether the tool is marked to be deferred although it
// is not an MCP tool. Whether it is deferred is ShouldDefer.
func (t *Tool) Deferred() bool { return t.def.Deferred }

// AlwaysLoad reports whether the tool is never deferred.
func (t *Tool) AlwaysLoad() bool { return t.def.AlwaysLoad }

// Origin is where the tool comes from.
func (t *Tool) Origin() Origin { return t.def.Origin }

// --- model contract ---

// Description is the tool's description.
func (t *Tool) Description() string { return t.def.Description }

// Prompt is the tool's full model-facing text, "" when it has none.
func (t *Tool) Prompt() string { return t.def.Prompt }

// ModelDescription is the description the model gets: the prompt text
// when the tool has one, else the description.
func (t *Tool) ModelDescription() string {
	if t.def.Prompt != "" {
		return t.def.Prompt
	}
	return t.def.Description
}

// InputSchema is the JSON Schema of the input.
func (t *Tool) InputSchema() json.RawMessage { return t.def.InputSchema }

// OutputSchema is the JSON Schema of a structured output, nil when none.
func (t *Tool) OutputSchema() json.RawMessage { return t.def.OutputSchema }

// Strict reports whether the model's arguments are to be held strictly to
// the schema by providers that support it.
func (t *Tool) Strict() bool { return t.def.Strict }

// --- execution ---

// Call runs the tool, turning a panic into an error so that one bad tool
// cannot take a worker down.
func (t *Tool) Call(ctx context.Context, input json.RawMessage, tc TurnContext, progress Progress) (res Result, err error) {
	if progress == nil {
		progress = func(string) {}
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool %s panicked: %v", t.def.Name, p)
		}
	}()
	return t.def.Call(ctx, input, tc, progress)
}

// ValidateInput runs the tool's own input check, beyond the schema; nil
// when the tool has none. A panic is returned as an error: a check that
// cannot decide rejects the call.
func (t *Tool) ValidateInput(ctx context.Context, input json.RawMessage, tc TurnContext) (err error) {
	if t.def.ValidateInput == nil {
		return nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s input validation panicked: %v", t.def.Name, p)
		}
	}()
	return t.def.ValidateInput(ctx, input, tc)
}

// Timeout is the tool's own call timeout, 0 when it has none.
func (t *Tool) Timeout() time.Duration { return t.def.Timeout }

// TimeoutFor is the timeout of one call: what its input asks for where the
// tool allows that, else the tool's own, 0 when it has none.
func (t *Tool) TimeoutFor(input json.RawMessage) (d time.Duration) {
	if t.def.CallTimeout != nil {
		func() {
			defer func() { _ = recover() }()
			d = t.def.CallTimeout(input)
		}()
		if d > 0 {
			return d
		}
	}
	return t.def.Timeout
}

// CancelsSiblings reports whether an error of this tool cancels its siblings.
func (t *Tool) CancelsSiblings() bool { return t.def.CancelsSiblings }

// InterruptBehavior is what a running call does on user interrupt.
func (t *Tool) InterruptBehavior() Interrupt { return t.def.Interrupt }

// PlanModeAllowed reports whether the tool may run in plan mode although
// it is not read-only.
func (t *Tool) PlanModeAllowed() bool { return t.def.PlanModeAllowed }

// IsFailure reports whether an error result counts as a failure.
func (t *Tool) IsFailure(r Result) bool {
	if !r.IsError {
		return false
	}
	if t.def.IsFailure == nil {
		return true
	}
	return t.def.IsFailure(r)
}

// --- result shaping ---

// MaxResultChars is the content cap.
func (t *Tool) MaxResultChars() int { return t.def.MaxResultChars }

// MapOutput turns a call's result into what the model gets. Without a
// MapOutput func the result is unchanged; one that panics yields an error
// result, never the unmapped output.
func (t *Tool) MapOutput(r Result) (out Result) {
	if t.def.MapOutput == nil {
		return r
	}
	defer func() {
		if p := recover(); p != nil {
			out = Result{Content: fmt.Sprintf("%s: mapping the output failed: %v", t.def.Name, p), IsError: true}
		}
	}()
	return t.def.MapOutput(r)
}

// EmptyText is the content that replaces an empty successful output.
func (t *Tool) EmptyText() string { return t.def.EmptyText }

// --- presentation ---

// UserFacingName is the name people see.
func (t *Tool) UserFacingName() string { return t.def.UserFacingName }

// ActivityChars is how much of a call's main argument the default Activity
// shows.
const ActivityChars = 40

// Activity describes a call for people: "Bash(ls -la)". A panicking
// Activity func falls back to the default.
func (t *Tool) Activity(input json.RawMessage) (s string) {
	if t.def.Activity != nil {
		if s, ok := safeText(t.def.Activity, input); ok {
			return s
		}
	}
	return DefaultActivity(t.def.UserFacingName, input)
}

// Summary is a call's one-line summary for logs and progress.
func (t *Tool) Summary(input json.RawMessage) string {
	if t.def.Summary != nil {
		if s, ok := safeText(t.def.Summary, input); ok {
			return s
		}
	}
	return t.Activity(input)
}

// DefaultActivity is name followed by the first ActivityChars characters of
// the call's main argument (MainArgument) in parentheses, with "…" when
// cut; just name when the input has none.
func DefaultActivity(name string, input json.RawMessage) string {
	if arg := MainArgument(input); arg != "" {
		return activityOf(name, arg)
	}
	return name
}

// MainArgument is what a call is mostly about: the first present of its
// input's command, file_path and pattern, "" when it has none. Activities
// and permission rules name calls by it.
func MainArgument(input json.RawMessage) string {
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		Pattern  string `json:"pattern"`
	}
	_ = json.Unmarshal(input, &in)
	for _, v := range []string{in.Command, in.FilePath, in.Pattern} {
		if v != "" {
			return v
		}
	}
	return ""
}

// activityOf is name(arg), arg cut to ActivityChars characters and "…".
func activityOf(name, arg string) string {
	if utf8.RuneCountInString(arg) > ActivityChars {
		arg = string([]rune(arg)[:ActivityChars]) + "…"
	}
	return name + "(" + arg + ")"
}

// safeText runs f, reporting false when it panics.
func safeText(f func(json.RawMessage) string, input json.RawMessage) (s string, ok bool) {
	defer func() {
		if recover() != nil {
			s, ok = "", false
		}
	}()
	return f(input), true
}
