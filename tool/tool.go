// Package tool defines the contract every tool implements, the registry that
// resolves a call's name to a tool, and the tool pool sent to the model.
//
// The contract has seven groups that do not overlap (docs/tools.md, Contract):
//
//   - identity and discovery: Name, Aliases, SearchHint, Enabled, Deferred,
//     AlwaysLoad, Origin;
//   - model contract: Description, Prompt, InputSchema, OutputSchema, Strict;
//   - execution: Call (with progress and a context change in its Result),
//     ValidateInput, timeouts;
//   - safety predicates, on each call's input: ConcurrencySafe, ReadOnly,
//     Destructive, OpenWorld; Interrupt and CancelsSiblings;
//   - permissions: Permission (allow, deny with a reason, ask; with an
//     updated input) and Path, the path a call touches, for rules;
//   - result shaping: MaxResultChars, MapOutput, EmptyText;
//   - presentation: UserFacingName, Activity, Summary.
//
// A tool is built from a Definition with fail-closed defaults laid underneath
// it (see Build): where a definition is silent, the tool is enabled, not
// concurrency-safe, not read-only, not destructive, blocks on interrupt and
// allows the call. A predicate that errors or panics counts as false, so a
// broken predicate can only make the scheduler more careful, never less.
//
// The pool (Assemble) is the built-in tools sorted by name followed by the
// external ones sorted by name, so that the rendered list (Render) is
// byte-identical whatever the order in which the tools registered. Tools
// that would cost too much context are deferred (PlanDeferral) and found
// through the ToolSearch tool (NewToolSearch, Search).
package tool

import (
	"context"
	"encoding/json"
)

// DefaultMaxResultChars is the result cap of a tool that does not set one.
const DefaultMaxResultChars = 100_000

// Interrupt says what a running call does when the user interrupts the turn.
type Interrupt int

const (
	// InterruptBlock lets a running call finish (the default).
	InterruptBlock Interrupt = iota
	// InterruptCancel stops a running call.
	InterruptCancel
)

// TurnContext is the part of the turn's state a call runs with, and the
// call's idempotency key.
type TurnContext struct {
	// WorkDir is the working directory and the root file tools are confined to.
	WorkDir string
	// PermissionMode is the turn's permission mode ("default", "plan", ...).
	PermissionMode string
	// Version increases with every applied context change.
	Version int64
	// IdempotencyKey is the call's own key for the services it has side
	// effects on, the same on every attempt of the call (IdempotencyKey).
	// A tool passes it on (Bash as TOOLWIRE_IDEMPOTENCY_KEY, an MCP tool in
	// the request's _meta); the model never sees it.
	IdempotencyKey string
}

// Result is what a call returns to the model.
type Result struct {
	// Content is the text the model gets.
	Content string
	// IsError marks a failed call; the content then explains the failure.
	IsError bool
	// Context, when set, changes the turn's context for the calls after
	// this one (docs/orchestration.md, Context modifiers).
	Context *ContextChange
	// Cut, when set, says the tool kept only the start of its output, so
	// that what the model is told, and what is stored, can say how much
	// there really was.
	Cut *OutputCut
}

// OutputCut describes output a tool cut before making its result: Content
// holds the first Kept bytes of Total.
type OutputCut struct {
	Total int64
	Kept  int64
}

// ContextChange is a change to the turn context; nil fields stay as they are.
type ContextChange struct {
	WorkDir        *string
	PermissionMode *string
}

// Permission modes of a turn.
const (
	// ModeDefault runs calls as the rules allow.
	ModeDefault = "default"
	// ModePlan denies every call that is not read-only.
	ModePlan = "plan"
)

// Progress reports a line of progress while a call runs; it must not block.
type Progress func(text string)

// CallFunc runs one call with its validated input.
type CallFunc func(ctx context.Context, input json.RawMessage, tc TurnContext, progress Progress) (Result, error)

// Tool is a built, immutable tool. Build it with Build or MustBuild.
type Tool struct {
	def Definition
}
