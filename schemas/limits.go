package schemas

import "fmt"

// Limits bound every number and size an event may carry. They are applied
// when an event is decoded, before any stage acts on it, so that what one
// event can cost is known in advance: a call's lease entry is made only for
// a seq under MaxCallsPerTurn, and no stage keeps a string longer than the
// limits below. docs/orchestration.md (Limits) lists them with the memory
// bound they give.
//
// A zero field means its default (DefaultLimits).
type Limits struct {
	// MaxCallsPerTurn bounds a turn's calls: every seq is below it, and a
	// turn_end's calls, a turn_done's results and max_concurrency are at
	// most it.
	MaxCallsPerTurn int `json:"max_calls_per_turn,omitempty"`
	// MaxInputBytes bounds a call's input and raw_input (JSON text).
	MaxInputBytes int `json:"max_input_bytes,omitempty"`
	// MaxContentBytes bounds a result's content.
	MaxContentBytes int `json:"max_content_bytes,omitempty"`
	// MaxIDBytes bounds a tool_use_id.
	MaxIDBytes int `json:"max_id_bytes,omitempty"`
	// MaxNameBytes bounds a tool's name and the other short names (pool,
	// worker, blob reference, stop reason).
	MaxNameBytes int `json:"max_name_bytes,omitempty"`
	// MaxTextBytes bounds the free texts: a call's error, a turn's error,
	// a cancel's or an approval's reason, a progress line.
	MaxTextBytes int `json:"max_text_bytes,omitempty"`
}

// Default limits. The call count keeps a turn's lease, which every call
// rewrites, small (an entry is at most about 200 bytes encoded); the input
// and content limits sit well under the embedded server's 8 MiB payload.
const (
	DefaultMaxCallsPerTurn = 512
	DefaultMaxInputBytes   = 1 << 20
	DefaultMaxContentBytes = 1 << 20
	DefaultMaxIDBytes      = 256
	DefaultMaxNameBytes    = 256
	DefaultMaxTextBytes    = 16 << 10
)

// DefaultLimits are the limits a stage applies unless configured otherwise.
func DefaultLimits() Limits { return Limits{}.WithDefaults() }

// WithDefaults fills the zero fields of l with the defaults.
func (l Limits) WithDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxCallsPerTurn, DefaultMaxCallsPerTurn)
	def(&l.MaxInputBytes, DefaultMaxInputBytes)
	def(&l.MaxContentBytes, DefaultMaxContentBytes)
	def(&l.MaxIDBytes, DefaultMaxIDBytes)
	def(&l.MaxNameBytes, DefaultMaxNameBytes)
	def(&l.MaxTextBytes, DefaultMaxTextBytes)
	return l
}

// Names of the limits as configured, used in errors.
const (
	LimitCalls   = "max_calls_per_turn"
	LimitInput   = "max_input_bytes"
	LimitContent = "max_content_bytes"
	LimitID      = "max_id_bytes"
	LimitName    = "max_name_bytes"
	LimitText    = "max_text_bytes"
)

// limitCheck collects the first field over its limit.
type limitCheck struct {
	l   Limits
	err error
}

// seq checks a call position: below MaxCallsPerTurn.
func (c *limitCheck) seq(field string, v int) {
	if c.err == nil && v >= c.l.MaxCallsPerTurn {
		c.err = overLimit(field, fmt.Sprintf("%d is not below the limit of %d calls per turn", v, c.l.MaxCallsPerTurn), LimitCalls)
	}
}

// count checks a number of calls: at most MaxCallsPerTurn.
func (c *limitCheck) count(field string, v int) {
	if c.err == nil && v > c.l.MaxCallsPerTurn {
		c.err = overLimit(field, fmt.Sprintf("%d is over the limit of %d calls per turn", v, c.l.MaxCallsPerTurn), LimitCalls)
	}
}

// size checks a length in bytes against max.
func (c *limitCheck) size(field string, n, max int, limit string) {
	if c.err == nil && n > max {
		c.err = overLimit(field, fmt.Sprintf("%d bytes, over the limit of %d", n, max), limit)
	}
}

func (c *limitCheck) id(field, v string)        { c.size(field, len(v), c.l.MaxIDBytes, LimitID) }
func (c *limitCheck) name(field, v string)      { c.size(field, len(v), c.l.MaxNameBytes, LimitName) }
func (c *limitCheck) text(field, v string)      { c.size(field, len(v), c.l.MaxTextBytes, LimitText) }
func (c *limitCheck) input(field string, n int) { c.size(field, n, c.l.MaxInputBytes, LimitInput) }

func overLimit(field, reason, limit string) *FieldError {
	return &FieldError{Field: field, Reason: reason + " (limits." + limit + ")", Limit: limit}
}

// Check reports the first field of d over l as a *FieldError whose Limit
// names the limit. l must have its defaults filled (WithDefaults).
func (l Limits) Check(d Data) error {
	c := &limitCheck{l: l}
	switch d := d.(type) {
	case *ToolUse:
		c.seq("seq", d.Seq)
		c.id("tool_use_id", d.ToolUseID)
		c.name("name", d.Name)
		c.input("input", len(d.Input))
		c.input("raw_input", len(d.RawInput))
		c.text("error", d.Error)
		c.count("max_concurrency", d.MaxConcurrency)
		c.count("calls", d.Calls)
	case *TurnEnd:
		c.count("calls", d.Calls)
		c.name("stop_reason", d.StopReason)
		c.text("error", d.Error)
	case *TurnCancel:
		c.text("reason", d.Reason)
	case *TurnDiscard:
		c.text("reason", d.Reason)
	case *Dispatch:
		c.seq("seq", d.Seq)
		c.id("tool_use_id", d.ToolUseID)
		c.name("tool", d.Tool)
		c.input("input", len(d.Input))
		c.name("pool", d.Pool)
		c.count("calls", d.Calls)
	case *ToolResult:
		c.seq("seq", d.Seq)
		c.id("tool_use_id", d.ToolUseID)
		c.name("name", d.Name)
		c.size("content", len(d.Content), l.MaxContentBytes, LimitContent)
		c.name("blob_ref", d.BlobRef)
		c.name("worker", d.Worker)
		c.count("turn_calls", d.TurnCalls)
	case *ToolProgress:
		c.seq("seq", d.Seq)
		c.text("text", d.Text)
	case *TurnDone:
		c.count("results", d.Results)
	case *ApprovalRequest:
		c.seq("seq", d.Seq)
		c.id("tool_use_id", d.ToolUseID)
		c.name("tool", d.Tool)
		c.input("input", len(d.Input))
		c.text("reason", d.Reason)
	case *ApprovalDecision:
		c.seq("seq", d.Seq)
		c.text("reason", d.Reason)
	}
	return c.err
}
