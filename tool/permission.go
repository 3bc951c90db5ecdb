package tool

import (
	"encoding/json"
	"fmt"
)

// Behavior is the outcome of a permission check.
type Behavior int

const (
	// Allow runs the call.
	Allow Behavior = iota
	// Deny refuses the call; the decision's Reason tells the model why.
	Deny
	// Ask asks the agent's human and waits for the answer.
	Ask
)

// String is "allow", "deny" or "ask".
func (b Behavior) String() string {
	switch b {
	case Allow:
		return "allow"
	case Deny:
		return "deny"
	case Ask:
		return "ask"
	}
	return fmt.Sprintf("Behavior(%d)", int(b))
}

// Decision is what a permission check says about one call.
type Decision struct {
	Behavior Behavior
	// Reason explains a denial (or what to ask); shown to the model.
	Reason string
	// UpdatedInput, when set, replaces the call's input (a normalized path,
	// a stripped flag) for the rest of the call's life.
	UpdatedInput json.RawMessage
}

// Allowed is the decision that lets a call run as it is.
func Allowed() Decision { return Decision{Behavior: Allow} }

// Denied is a denial with the reason the model gets.
func Denied(reason string) Decision { return Decision{Behavior: Deny, Reason: reason} }

// Asked is a decision to ask the agent's human, saying what about.
func Asked(reason string) Decision { return Decision{Behavior: Ask, Reason: reason} }

// PermissionContext is what a tool's permission check knows about the turn.
type PermissionContext struct {
	// Mode is the turn's permission mode (ModeDefault, ModePlan, ...).
	Mode string
	// WorkDir is the turn's working directory.
	WorkDir string
}

// CheckPermission runs the tool's own permission check on one call; without
// one the call is allowed (the pool-level rules still apply). A check that
// panics denies the call.
func (t *Tool) CheckPermission(input json.RawMessage, pc PermissionContext) (d Decision) {
	if t.def.Permission == nil {
		return Allowed()
	}
	defer func() {
		if p := recover(); p != nil {
			d = Denied(fmt.Sprintf("%s permission check failed: %v", t.def.Name, p))
		}
	}()
	return t.def.Permission(input, pc)
}

// Path is the path a call touches, for path rules; "" when the tool says
// none (or its Path func panics).
func (t *Tool) Path(input json.RawMessage) string {
	if t.def.Path == nil {
		return ""
	}
	s, _ := safeText(t.def.Path, input)
	return s
}
