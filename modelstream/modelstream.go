// Package modelstream is the contract shared by the streaming model adapters:
// a Parser reads one model response stream and reports each tool call to a
// Handler as soon as the call is complete, then reports the end of the message.
//
// Adapters never report a half-streamed call as runnable. A call cut off by
// max_tokens, a mid-stream error or an early EOF is still reported, with
// Complete false and Err saying why, so the caller can tell the model what
// happened instead of silently losing the call. Stream failures are data, not
// errors: they arrive in End.Err, and Parse returns an error only when it could
// not do its job at all (the Handler failed, ctx was cancelled or r failed).
package modelstream

import (
	"context"
	"encoding/json"
	"io"
)

// Call is one tool call as the model streamed it.
type Call struct {
	// Seq is the 0-based position among the message's tool calls, in content-block order.
	Seq int
	// ID is the provider's call id, or a synthesized one that is the same for the same stream.
	ID string
	// Name is the tool name the model chose.
	Name string
	// Input is the arguments object as compact JSON; nil unless Complete.
	Input json.RawMessage
	// RawInput is the argument text exactly as streamed, joined.
	RawInput string
	// Complete is true only when the call's block ended and its text parsed as a JSON object.
	Complete bool
	// Err says why the call is not runnable; empty when Complete.
	Err string
	// Ended is set when the call's block ended (its end came) but its text
	// is not a JSON object: Complete is false, and RawInput, the text as the
	// model wrote it, is what the pipeline's repair may still make a call of
	// (docs/coercion.md, Repair). A block the stream never finished is not
	// Ended: its text is cut, not malformed.
	Ended bool
	// At is the byte offset in the input just past the event that completed or ended the call.
	At int64
}

// End is the end of a message.
type End struct {
	// Calls is the number of calls reported, complete or not.
	Calls int
	// StopReason is the provider's stop reason ("tool_use", "end_turn", "max_tokens"...), "" if never seen.
	StopReason string
	// Err is non-empty when the stream failed, and says what failed and at which byte offset.
	Err string
	// Warnings counts what the parser stepped over without failing the
	// stream, such as an unreadable event that could not hold a call: the
	// calls are whole, but the stream was not.
	Warnings int
	// Warning says what the first of them was and at which bytes, so that
	// End stays comparable; "" when Warnings is 0.
	Warning string
}

// Handler receives a parser's reports as soon as they are known.
//
// A Handler error stops parsing; Parse returns it wrapped.
type Handler interface {
	// Call reports one tool call, in Seq order.
	Call(ctx context.Context, c Call) error
	// End reports the end of the message, once, after every Call.
	End(ctx context.Context, e End) error
}

// Parser reads one model response stream and reports its tool calls and end to a Handler.
//
// Parse reports each tool call the moment its block is complete and End exactly
// once at the end, also when the stream is malformed or truncated: such
// streams are reported through End.Err and incomplete calls. Parse returns an
// error only for a Handler error, ctx cancellation, or a read error from r
// other than io.EOF; in the last case End is still reported first.
type Parser interface {
	Parse(ctx context.Context, r io.Reader, h Handler) error
}
