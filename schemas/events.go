// Package schemas is toolwire's wire contract: the event types, their
// CloudEvents attributes, the msgpack and JSON codecs, and a JSON Schema file
// per event type for producers written in other languages.
//
// Event data is msgpack by default; JSON is accepted wherever an event is
// read. The `input` of a call is carried as JSON text inside msgpack (see
// RawJSON) so that arguments keep their exact JSON numbers end to end.
package schemas

import (
	"fmt"
	"time"
)

// Event types, the ce-type attribute.
const (
	TypeToolUse      = "dev.toolwire.tool_use.v1"
	TypeTurnEnd      = "dev.toolwire.turn_end.v1"
	TypeTurnCancel   = "dev.toolwire.turn_cancel.v1"
	TypeTurnDiscard  = "dev.toolwire.turn_discard.v1"
	TypeDispatch     = "dev.toolwire.dispatch.v1"
	TypeToolResult   = "dev.toolwire.tool_result.v1"
	TypeToolProgress = "dev.toolwire.tool_progress.v1"
	TypeTurnDone     = "dev.toolwire.turn_done.v1"
)

// Data is the payload of one event type.
type Data interface {
	// EventType is the ce-type of this payload.
	EventType() string
	// Validate reports the first missing or impossible field as a *FieldError.
	Validate() error
}

// ToolUse is one tool call of a turn as the model streamed it.
type ToolUse struct {
	Seq       int     `msgpack:"seq" json:"seq"`
	ToolUseID string  `msgpack:"tool_use_id" json:"tool_use_id"`
	Name      string  `msgpack:"name" json:"name"`
	Input     RawJSON `msgpack:"input,omitempty" json:"input,omitempty"`
	// RawInput is the argument text as streamed, when it did not parse. A
	// complete call may carry it instead of Input: its block ended but its
	// text is malformed, and the router repairs it where the repair rule
	// allows (or answers it with the parse error).
	RawInput string `msgpack:"raw_input,omitempty" json:"raw_input,omitempty"`
	// Complete is false when the call's block never completed; such a call is never run.
	Complete bool `msgpack:"complete" json:"complete"`
	// Error says why an incomplete call is not runnable.
	Error string `msgpack:"error,omitempty" json:"error,omitempty"`
	// MaxConcurrency, when set on any call of a turn before the turn's lease
	// exists, overrides the router's default for the whole turn.
	MaxConcurrency int `msgpack:"max_concurrency,omitempty" json:"max_concurrency,omitempty"`
	// Calls, when set, is the turn's number of calls, known as the call is
	// sent (a whole turn submitted at once): the turn then needs no
	// turn_end, which saves the pipeline its handling. Every call of such a
	// turn carries the same count; the first count the turn gets (from a
	// call or a turn_end) is the one that holds. 0: not known, a turn_end
	// will say.
	Calls int `msgpack:"calls,omitempty" json:"calls,omitempty"`
}

// TurnEnd closes a turn's calls: no call with seq >= Calls will come.
type TurnEnd struct {
	Calls      int    `msgpack:"calls" json:"calls"`
	StopReason string `msgpack:"stop_reason,omitempty" json:"stop_reason,omitempty"`
	// Error is set when the stream failed; calls it reported stay as they are.
	Error string `msgpack:"error,omitempty" json:"error,omitempty"`
}

// TurnCancel is a user interrupt.
type TurnCancel struct {
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// TurnDiscard discards a turn's unfinished calls (the stream will be retried).
type TurnDiscard struct {
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// Dispatch is a routed call on its way to a pool's executors.
type Dispatch struct {
	Seq       int     `msgpack:"seq" json:"seq"`
	ToolUseID string  `msgpack:"tool_use_id" json:"tool_use_id"`
	Tool      string  `msgpack:"tool" json:"tool"`
	Input     RawJSON `msgpack:"input" json:"input"`
	Pool      string  `msgpack:"pool" json:"pool"`
	// Repaired is set when the argument text needed repair to parse.
	Repaired bool `msgpack:"repaired,omitempty" json:"repaired,omitempty"`
	// LeaseRev and Lease are the turn's lease as the router wrote it when
	// it registered the call (omitted for a big lease): the executor tries
	// its claim on it instead of reading the lease first. Only a hint: the
	// claim's compare-and-set checks the revision.
	LeaseRev uint64 `msgpack:"lease_rev,omitempty" json:"lease_rev,omitempty"`
	Lease    []byte `msgpack:"lease,omitempty" json:"lease,omitempty"`
	// Calls is the turn's number of calls as the router's lease had it, 0
	// while unknown; the call's result carries it on (ToolResult.TurnCalls).
	Calls int `msgpack:"calls,omitempty" json:"calls,omitempty"`
}

// ToolResult is the one result of one call.
type ToolResult struct {
	Seq        int       `msgpack:"seq" json:"seq"`
	ToolUseID  string    `msgpack:"tool_use_id" json:"tool_use_id"`
	Name       string    `msgpack:"name" json:"name"`
	IsError    bool      `msgpack:"is_error" json:"is_error"`
	Content    string    `msgpack:"content" json:"content"`
	Truncated  bool      `msgpack:"truncated,omitempty" json:"truncated,omitempty"`
	BlobRef    string    `msgpack:"blob_ref,omitempty" json:"blob_ref,omitempty"`
	StartedAt  time.Time `msgpack:"started_at" json:"started_at"`
	FinishedAt time.Time `msgpack:"finished_at" json:"finished_at"`
	Worker     string    `msgpack:"worker" json:"worker"`
	Attempt    int       `msgpack:"attempt" json:"attempt"`
	// Safe records whether the call ran as concurrency-safe.
	Safe bool `msgpack:"safe,omitempty" json:"safe,omitempty"`
	// ContextVersion is the turn context version the call ran with.
	ContextVersion int64 `msgpack:"context_version,omitempty" json:"context_version,omitempty"`
	// Batch is the index of the concurrent batch the call ran in (calls in
	// call order, consecutive safe calls forming one batch).
	Batch int `msgpack:"batch,omitempty" json:"batch,omitempty"`
	// Late marks the answer to a call that came after its turn's end: it is
	// stored for the record and never delivered.
	Late bool `msgpack:"late,omitempty" json:"late,omitempty"`
	// TurnCalls is the turn's number of calls as its lease knew it when the
	// result was made, 0 while unknown: reorder completes a turn whose
	// count came on its calls (ToolUse.Calls) from its results, with no end
	// marker.
	TurnCalls int `msgpack:"turn_calls,omitempty" json:"turn_calls,omitempty"`
}

// TurnCount is the turn's count a result carries (ToolResult.TurnCalls): 0
// when d is no result, carries none, or is a late call's answer, which
// says nothing of its turn.
func TurnCount(d Data) int {
	if r, ok := d.(*ToolResult); ok && r != nil && !r.Late {
		return r.TurnCalls
	}
	return 0
}

// ToolProgress is a progress line of a running call.
type ToolProgress struct {
	Seq  int    `msgpack:"seq" json:"seq"`
	Text string `msgpack:"text" json:"text"`
}

// TurnDone follows the last result of a turn.
type TurnDone struct {
	Results int `msgpack:"results" json:"results"`
}

// EventType implements Data.
func (*ToolUse) EventType() string { return TypeToolUse }

// EventType implements Data.
func (*TurnEnd) EventType() string { return TypeTurnEnd }

// EventType implements Data.
func (*TurnCancel) EventType() string { return TypeTurnCancel }

// EventType implements Data.
func (*TurnDiscard) EventType() string { return TypeTurnDiscard }

// EventType implements Data.
func (*Dispatch) EventType() string { return TypeDispatch }

// EventType implements Data.
func (*ToolResult) EventType() string { return TypeToolResult }

// EventType implements Data.
func (*ToolProgress) EventType() string { return TypeToolProgress }

// EventType implements Data.
func (*TurnDone) EventType() string { return TypeTurnDone }

// newData returns an empty payload for typ with sentinels in the fields that
// are required but whose zero value is legal, so that a missing field can be
// told from a zero one after decoding.
func newData(typ string) (Data, error) {
	switch typ {
	case TypeToolUse:
		return &ToolUse{Seq: -1}, nil
	case TypeTurnEnd:
		return &TurnEnd{Calls: -1}, nil
	case TypeTurnCancel:
		return &TurnCancel{}, nil
	case TypeTurnDiscard:
		return &TurnDiscard{}, nil
	case TypeDispatch:
		return &Dispatch{Seq: -1}, nil
	case TypeToolResult:
		return &ToolResult{Seq: -1}, nil
	case TypeToolProgress:
		return &ToolProgress{Seq: -1}, nil
	case TypeTurnDone:
		return &TurnDone{Results: -1}, nil
	case TypeApprovalRequest:
		return &ApprovalRequest{Seq: -1}, nil
	case TypeApprovalDecision:
		return &ApprovalDecision{Seq: -1}, nil
	}
	return nil, &FieldError{Field: "ce-type", Reason: fmt.Sprintf("unknown event type %q", typ)}
}

func required(field string, ok bool) error {
	if ok {
		return nil
	}
	return &FieldError{Field: field, Reason: "required"}
}

func seqField(seq int) error {
	if seq < 0 {
		return &FieldError{Field: "seq", Reason: "required, a non-negative integer"}
	}
	return nil
}

// Validate implements Data.
func (d *ToolUse) Validate() error {
	if err := seqField(d.Seq); err != nil {
		return err
	}
	if err := required("tool_use_id", d.ToolUseID != ""); err != nil {
		return err
	}
	if d.Complete {
		if err := required("name", d.Name != ""); err != nil {
			return err
		}
		if len(d.Input) == 0 && d.RawInput == "" {
			return &FieldError{Field: "input", Reason: "required when complete is true (or raw_input, for text that did not parse)"}
		}
	}
	if d.MaxConcurrency < 0 {
		return &FieldError{Field: "max_concurrency", Reason: "must not be negative"}
	}
	return callsField("calls", d.Calls, d.Seq)
}

// callsField checks a turn's count carried by one of its calls: absent (0),
// or more than the call's seq.
func callsField(field string, calls, seq int) error {
	switch {
	case calls < 0:
		return &FieldError{Field: field, Reason: "must not be negative"}
	case calls > 0 && seq >= calls:
		return &FieldError{Field: field, Reason: fmt.Sprintf("%d calls leave no place for seq %d", calls, seq)}
	}
	return nil
}

// Validate implements Data.
func (d *TurnEnd) Validate() error {
	if d.Calls < 0 {
		return &FieldError{Field: "calls", Reason: "required, a non-negative integer"}
	}
	return nil
}

// Validate implements Data.
func (d *TurnCancel) Validate() error { return nil }

// Validate implements Data.
func (d *TurnDiscard) Validate() error { return nil }

// Validate implements Data.
func (d *Dispatch) Validate() error {
	if err := seqField(d.Seq); err != nil {
		return err
	}
	if err := required("tool_use_id", d.ToolUseID != ""); err != nil {
		return err
	}
	if err := required("tool", d.Tool != ""); err != nil {
		return err
	}
	if err := required("pool", d.Pool != ""); err != nil {
		return err
	}
	if err := required("input", len(d.Input) > 0); err != nil {
		return err
	}
	return callsField("calls", d.Calls, d.Seq)
}

// Validate implements Data.
func (d *ToolResult) Validate() error {
	if err := seqField(d.Seq); err != nil {
		return err
	}
	if err := required("tool_use_id", d.ToolUseID != ""); err != nil {
		return err
	}
	return callsField("turn_calls", d.TurnCalls, d.Seq)
}

// Validate implements Data.
func (d *ToolProgress) Validate() error { return seqField(d.Seq) }

// Validate implements Data.
func (d *TurnDone) Validate() error {
	if d.Results < 0 {
		return &FieldError{Field: "results", Reason: "required, a non-negative integer"}
	}
	return nil
}

// Approval event types: a call that a permission rule says to ask about
// waits for its human's decision.
const (
	TypeApprovalRequest  = "dev.toolwire.approval_request.v1"
	TypeApprovalDecision = "dev.toolwire.approval_decision.v1"
)

// ApprovalRequest asks the agent's human whether a call may run.
type ApprovalRequest struct {
	Seq       int     `msgpack:"seq" json:"seq"`
	ToolUseID string  `msgpack:"tool_use_id" json:"tool_use_id"`
	Tool      string  `msgpack:"tool" json:"tool"`
	Input     RawJSON `msgpack:"input" json:"input"`
	// Reason says which rule asked.
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// ApprovalDecision answers an ApprovalRequest.
type ApprovalDecision struct {
	Seq   int  `msgpack:"seq" json:"seq"`
	Allow bool `msgpack:"allow" json:"allow"`
	// Reason is shown to the model when the call is refused.
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// EventType implements Data.
func (*ApprovalRequest) EventType() string { return TypeApprovalRequest }

// EventType implements Data.
func (*ApprovalDecision) EventType() string { return TypeApprovalDecision }

// Validate implements Data.
func (d *ApprovalRequest) Validate() error {
	if err := seqField(d.Seq); err != nil {
		return err
	}
	if err := required("tool_use_id", d.ToolUseID != ""); err != nil {
		return err
	}
	if err := required("tool", d.Tool != ""); err != nil {
		return err
	}
	return required("input", len(d.Input) > 0)
}

// Validate implements Data.
func (d *ApprovalDecision) Validate() error { return seqField(d.Seq) }
