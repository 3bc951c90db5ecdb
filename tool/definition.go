package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolwire/toolwire/internal/texts"
)

// Definition is what a tool author writes; zero fields take the fail-closed
// defaults of Build. Only Name and Call are required.
type Definition struct {
	// --- identity and discovery ---

	Name    string
	Aliases []string
	// SearchHint is a short capability phrase (3–10 words) ToolSearch
	// matches besides the name and description; whitespace is collapsed.
	SearchHint string
	// Enabled says whether the tool is offered at all (nil: enabled). A
	// disabled tool is left out of the pool; one whose Enabled panics is
	// disabled.
	Enabled func() bool
	// Deferred marks a built-in tool to be deferred like an MCP tool: not
	// sent until ToolSearch finds it (docs/tools.md, Deferred tools and ToolSearch).
	Deferred bool
	// AlwaysLoad keeps the tool out of deferral, whatever its origin.
	AlwaysLoad bool
	// Origin is where the tool comes from (default: built-in).
	Origin Origin

	// --- model contract ---

	// Description is what the tool does, in a sentence or a paragraph.
	Description string
	// Prompt, when set, is the full text the model gets as the tool's
	// description instead of Description (usage rules, examples). See
	// Tool.ModelDescription.
	Prompt string
	// InputSchema is the JSON Schema of the input object (default
	// {"type":"object"}).
	InputSchema json.RawMessage
	// OutputSchema is the JSON Schema of a structured output, if any.
	OutputSchema json.RawMessage
	// Strict asks providers that support it (OpenAI) to hold the model's
	// arguments strictly to the schema.
	Strict bool

	// --- execution ---

	Call CallFunc
	// ValidateInput checks what a schema cannot (a path inside the root, a
	// sane combination of fields) before the call runs; a non-nil error
	// rejects the call with that text. A panic counts as a rejection.
	ValidateInput func(ctx context.Context, input json.RawMessage, tc TurnContext) error
	// Timeout bounds one call (0: the executor's default).
	Timeout time.Duration
	// CallTimeout, when set, is a call's own timeout from its input (Bash's
	// "timeout"); 0 falls back to Timeout.
	CallTimeout func(input json.RawMessage) time.Duration

	// --- safety predicates (on the call's input) ---

	// ConcurrencySafe says whether this call may run beside others (default: no).
	ConcurrencySafe Predicate
	// ReadOnly says whether this call only reads (default: no).
	ReadOnly Predicate
	// Destructive says whether this call may destroy data (default: no).
	Destructive Predicate
	// OpenWorld says whether this call reaches outside the machine: the
	// network, other people's systems (default: no).
	OpenWorld Predicate
	// CancelsSiblings makes an error of this tool cancel the turn's unfinished calls.
	CancelsSiblings bool
	// Interrupt is the behaviour on user interrupt (default: block).
	Interrupt Interrupt
	// IsFailure decides whether a returned error result counts as a failure
	// for sibling cancellation; nil means every error result does.
	IsFailure func(r Result) bool
	// PlanModeAllowed lets a tool that is not read-only run in plan mode
	// (ExitPlanMode must, to leave it).
	PlanModeAllowed bool

	// --- permissions ---

	// Permission is the tool's own check of a call (default: allow; the
	// pool-level rules still apply). A panic counts as a denial.
	Permission func(input json.RawMessage, pc PermissionContext) Decision
	// Path is the path a call touches, which path rules (Read(./secrets/**))
	// are matched against; "" when it touches none.
	Path func(input json.RawMessage) string

	// --- result shaping ---

	// MaxResultChars caps the content (default DefaultMaxResultChars).
	MaxResultChars int
	// MapOutput turns what Call returned into what the model gets (default:
	// unchanged).
	MapOutput func(r Result) Result
	// EmptyText replaces an empty successful output (default
	// "(<name> completed with no output)").
	EmptyText string

	// --- presentation ---

	// UserFacingName is the name people see (default: Name).
	UserFacingName string
	// Activity describes a call for people, like "Bash(ls -la)" (default:
	// the user-facing name with the first 40 characters of the input's
	// command, file_path or pattern in parentheses).
	Activity func(input json.RawMessage) string
	// Summary is a call's one-line summary for logs and progress (default:
	// Activity).
	Summary func(input json.RawMessage) string
}

// OriginKind is the kind of place a tool comes from.
type OriginKind int

const (
	// OriginBuiltin is a tool compiled into the executor (the default).
	OriginBuiltin OriginKind = iota
	// OriginMCP is a tool of an MCP server.
	OriginMCP
	// OriginRemote is a tool hosted by a remote executor pool.
	OriginRemote
)

// String is "builtin", "mcp" or "remote".
func (k OriginKind) String() string {
	switch k {
	case OriginBuiltin:
		return "builtin"
	case OriginMCP:
		return "mcp"
	case OriginRemote:
		return "remote"
	}
	return fmt.Sprintf("OriginKind(%d)", int(k))
}

// Origin is where a tool comes from.
type Origin struct {
	Kind OriginKind
	// Server is the MCP server's name (OriginMCP) or the remote pool's name
	// (OriginRemote); empty for a built-in tool.
	Server string
}

// External reports whether the tool comes from outside the process: an MCP
// server or a remote pool.
func (o Origin) External() bool { return o.Kind != OriginBuiltin }

// String is "builtin", "mcp:<server>" or "remote:<pool>".
func (o Origin) String() string {
	if o.Server == "" {
		return o.Kind.String()
	}
	return o.Kind.String() + ":" + o.Server
}

// ErrInvalidDefinition is returned by Build for a definition that cannot work.
var ErrInvalidDefinition = errors.New("tool: invalid definition")

// Build lays the fail-closed defaults under def and checks what cannot be
// defaulted: a name, a call, JSON schemas and a known origin.
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
	if len(def.OutputSchema) > 0 && !json.Valid(def.OutputSchema) {
		return nil, fmt.Errorf("%w: %s output schema is not JSON", ErrInvalidDefinition, def.Name)
	}
	switch def.Origin.Kind {
	case OriginBuiltin:
	case OriginMCP, OriginRemote:
		if def.Origin.Server == "" {
			return nil, fmt.Errorf("%w: %s has an %s origin without its server's name", ErrInvalidDefinition, def.Name, def.Origin.Kind)
		}
	default:
		return nil, fmt.Errorf("%w: %s has an unknown origin kind %d", ErrInvalidDefinition, def.Name, int(def.Origin.Kind))
	}
	if def.MaxResultChars <= 0 {
		def.MaxResultChars = DefaultMaxResultChars
	}
	if def.UserFacingName == "" {
		def.UserFacingName = def.Name
	}
	if def.EmptyText == "" {
		def.EmptyText = texts.Empty(def.Name)
	}
	def.SearchHint = strings.Join(strings.Fields(def.SearchHint), " ")
	def.Aliases = append([]string(nil), def.Aliases...)
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
