// Package tool defines the contract every tool implements and the registry that
// resolves a call's name to a tool.
//
// A tool is built from a Definition with fail-closed defaults laid underneath
// it (see Build): where a definition is silent, the tool is not
// concurrency-safe, not read-only, blocks on interrupt and allows the call. A
// predicate that errors or panics counts as false, so a broken predicate can
// only make the scheduler more careful, never less.
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
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

// TurnContext is the part of the turn's state a call runs with.
type TurnContext struct {
	// WorkDir is the working directory and the root file tools are confined to.
	WorkDir string
	// PermissionMode is the turn's permission mode ("default", "plan", ...).
	PermissionMode string
	// Version increases with every applied context change.
	Version int64
}

// Result is what a call returns to the model.
type Result struct {
	// Content is the text the model gets.
	Content string
	// IsError marks a failed call; the content then explains the failure.
	IsError bool
	// Context, when set, changes the turn's context for the calls after
	// this one (notes/semantics.md §6).
	Context *ContextChange
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

// Predicate answers a safety question about one call's input.
type Predicate func(input json.RawMessage) (bool, error)

// Definition is what a tool author writes; zero fields take the fail-closed
// defaults of Build.
type Definition struct {
	Name        string
	Aliases     []string
	Description string
	// InputSchema is the JSON Schema of the input object.
	InputSchema json.RawMessage
	Call        CallFunc

	// ConcurrencySafe says whether this call may run beside others (default: no).
	ConcurrencySafe Predicate
	// ReadOnly says whether this call only reads (default: no).
	ReadOnly Predicate
	// Destructive says whether this call may destroy data (default: no).
	Destructive Predicate
	// CancelsSiblings makes an error of this tool cancel the turn's unfinished calls.
	CancelsSiblings bool
	// Interrupt is the behaviour on user interrupt (default: block).
	Interrupt Interrupt

	// MaxResultChars caps the content (default DefaultMaxResultChars).
	MaxResultChars int
	// Timeout bounds one call (0: the executor's default).
	Timeout time.Duration
	// CallTimeout, when set, is a call's own timeout from its input (Bash's
	// "timeout"); 0 falls back to Timeout.
	CallTimeout func(input json.RawMessage) time.Duration
	// IsFailure decides whether a returned error result counts as a failure
	// for sibling cancellation; nil means every error result does.
	IsFailure func(r Result) bool
	// PlanModeAllowed lets a tool that is not read-only run in plan mode
	// (ExitPlanMode must, to leave it).
	PlanModeAllowed bool
}

// Tool is a built, immutable tool.
type Tool struct {
	def Definition
}

// ErrInvalidDefinition is returned by Build for a definition that cannot work.
var ErrInvalidDefinition = errors.New("tool: invalid definition")

// Build lays the fail-closed defaults under def and checks what cannot be defaulted.
func Build(def Definition) (*Tool, error) {
	if def.Name == "" {
		return nil, fmt.Errorf("%w: empty name", ErrInvalidDefinition)
	}
	if def.Call == nil {
		return nil, fmt.Errorf("%w: %s has no Call", ErrInvalidDefinition, def.Name)
	}
	if len(def.InputSchema) == 0 {
		def.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	if !json.Valid(def.InputSchema) {
		return nil, fmt.Errorf("%w: %s input schema is not JSON", ErrInvalidDefinition, def.Name)
	}
	if def.MaxResultChars <= 0 {
		def.MaxResultChars = DefaultMaxResultChars
	}
	return &Tool{def: def}, nil
}

// MustBuild is Build for definitions fixed at compile time; it panics on error.
func MustBuild(def Definition) *Tool {
	t, err := Build(def)
	if err != nil {
		panic(err)
	}
	return t
}

// Name is the tool's canonical name.
func (t *Tool) Name() string { return t.def.Name }

// Aliases are other names that resolve to this tool.
func (t *Tool) Aliases() []string { return t.def.Aliases }

// Description is the model-facing description.
func (t *Tool) Description() string { return t.def.Description }

// InputSchema is the JSON Schema of the input.
func (t *Tool) InputSchema() json.RawMessage { return t.def.InputSchema }

// CancelsSiblings reports whether an error of this tool cancels its siblings.
func (t *Tool) CancelsSiblings() bool { return t.def.CancelsSiblings }

// InterruptBehavior is what a running call does on user interrupt.
func (t *Tool) InterruptBehavior() Interrupt { return t.def.Interrupt }

// PlanModeAllowed reports whether the tool may run in plan mode although
// it is not read-only.
func (t *Tool) PlanModeAllowed() bool { return t.def.PlanModeAllowed }

// MaxResultChars is the content cap.
func (t *Tool) MaxResultChars() int { return t.def.MaxResultChars }

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

// IsConcurrencySafe evaluates the concurrency predicate, failing closed.
func (t *Tool) IsConcurrencySafe(input json.RawMessage) bool {
	ok, _ := evalPredicate(t.def.ConcurrencySafe, input)
	return ok
}

// IsReadOnly evaluates the read-only predicate, failing closed.
func (t *Tool) IsReadOnly(input json.RawMessage) bool {
	ok, _ := evalPredicate(t.def.ReadOnly, input)
	return ok
}

// IsDestructive evaluates the destructive predicate; an error counts as false.
func (t *Tool) IsDestructive(input json.RawMessage) bool {
	ok, _ := evalPredicate(t.def.Destructive, input)
	return ok
}

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

// evalPredicate runs p, treating a nil predicate, an error or a panic as false.
func evalPredicate(p Predicate, input json.RawMessage) (ok bool, err error) {
	if p == nil {
		return false, nil
	}
	defer func() {
		if r := recover(); r != nil {
			ok, err = false, fmt.Errorf("predicate panicked: %v", r)
		}
	}()
	ok, err = p(input)
	if err != nil {
		return false, err
	}
	return ok, nil
}

// Always is a predicate that is true for every input.
func Always(json.RawMessage) (bool, error) { return true, nil }

// Registry resolves names and aliases to tools. It is safe for concurrent
// reads once built; Add is not meant to race with Lookup.
type Registry struct {
	byName map[string]*Tool
	tools  []*Tool
}

// ErrDuplicateTool is returned by Add when a name or alias is taken.
var ErrDuplicateTool = errors.New("tool: duplicate name")

// NewRegistry returns a registry holding the given tools.
func NewRegistry(tools ...*Tool) (*Registry, error) {
	r := &Registry{byName: map[string]*Tool{}}
	for _, t := range tools {
		if err := r.Add(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add registers t under its name and aliases.
func (r *Registry) Add(t *Tool) error {
	names := append([]string{t.Name()}, t.Aliases()...)
	for _, n := range names {
		if _, ok := r.byName[n]; ok {
			return fmt.Errorf("%w: %s", ErrDuplicateTool, n)
		}
	}
	for _, n := range names {
		r.byName[n] = t
	}
	r.tools = append(r.tools, t)
	sort.Slice(r.tools, func(i, j int) bool { return r.tools[i].Name() < r.tools[j].Name() })
	return nil
}

// Lookup finds a tool by name or alias.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Tools lists the registered tools sorted by name.
func (r *Registry) Tools() []*Tool { return append([]*Tool(nil), r.tools...) }
