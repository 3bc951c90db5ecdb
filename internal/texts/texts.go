// Package texts is the one table of the texts toolwire itself writes into
// the results a model reads: why a call was not run, was stopped, failed
// outside its tool, or what became of its output. What a tool writes is the
// tool's; what the argument checks say is in package coercion.
//
// Models are prompted with these texts and tests across the module match
// them, so each is pinned word for word by this package's test: a change to
// what the model sees is a change to that test too. An error text is
// wrapped by the sanitizer (<tool_use_error>…</tool_use_error>) when its
// result is built (internal/answer); the texts here are the words inside.
package texts

import (
	"fmt"
	"time"
)

// Turn control: calls stopped or never started because of their turn
// (docs/orchestration.md, Sibling cancellation; User interrupt and discard).
const (
	// Discard answers every unfinished call of a discarded turn: the
	// model's stream failed and will be retried.
	Discard = "Streaming fallback - tool execution discarded"
	// Interrupt answers the calls a user interrupt stopped or kept from
	// starting.
	Interrupt = "The user doesn't want to proceed with this tool use. The tool use was rejected."
)

// Sibling answers a call cancelled because another call of its turn, of a
// tool that cancels its siblings, failed. activity names the failing call
// as people see it, e.g. "Bash(mkdir /nonexistent/x)" (tool.Tool.Activity),
// or just the tool's name when its input has no command.
func Sibling(activity string) string {
	return "Cancelled: parallel tool call " + activity + " errored"
}

// Router: calls answered before they are dispatched
// (docs/orchestration.md, Classifying a call).

// StreamEnded is the reason Incomplete gives when the tool_use event says
// the call is incomplete but not why.
const StreamEnded = "the model's stream ended before this tool call was complete"

// Incomplete answers a call whose tool_use block never completed; it is
// never run, whatever a repair of its text would give. why is the stream
// adapter's reason (or the client's, for a call too large to send), else
// StreamEnded.
func Incomplete(why string) string {
	return "Tool call incomplete, not executed: " + why
}

// NoSuchTool answers a call of a tool that no router hosts and no live pool
// advertises.
func NoSuchTool(name string) string {
	return "No such tool available: " + name
}

// NoWorker answers a call of a tool that was advertised, but whose every
// worker has stopped since.
func NoWorker(name string) string {
	return "No worker for tool " + name + ": every worker of the pool that hosts it has stopped"
}

// InvalidArguments answers a call whose raw argument text cannot be used,
// or whose input the tool's schema refuses for a reason other than a
// validation failure (that one answers in coercion's words); why is the
// parser's or the schema's error.
func InvalidArguments(why string) string {
	return "Invalid tool arguments: " + why
}

// Late answers a tool_use whose seq is at or past the count its turn's end
// gave (total calls). The result is stored marked late and never delivered;
// the event's dead letter gives the same reason.
func Late(seq, total int) string {
	return fmt.Sprintf("tool_use seq %d came after its turn's end, which counted %d calls; not executed", seq, total)
}

// TurnOver is why an event of a turn whose end is recorded (its end
// marker, or results delivered) but whose lease has expired does nothing;
// Expired is the answer of such a call.
const TurnOver = "the turn is over (its end was recorded and its lease has expired)"

// Expired answers a tool_use of a turn that is over (TurnOver); like Late,
// it is stored marked late and never delivered.
func Expired(seq int) string {
	return fmt.Sprintf("tool_use seq %d: %s; not executed", seq, TurnOver)
}

// NotExecuted answers a call whose event a stage gave up on (it failed on
// every delivery, or its handling panicked); cause is why.
func NotExecuted(cause string) string {
	return "Tool call not executed: " + cause
}

// OverLimit answers a call whose tool_use event is over one of the
// pipeline's limits; cause names the field and the limit.
func OverLimit(cause string) string {
	return NotExecuted("the tool_use event is over a limit: " + cause)
}

// MalformedUse answers a call whose tool_use event does not decode, when
// its seq is still known.
func MalformedUse(cause string) string {
	return NotExecuted("malformed tool_use event: " + cause)
}

// Executor: calls answered by the worker instead of their tool
// (docs/orchestration.md, Sibling cancellation; Timeouts).

// MalformedDispatch answers a call whose dispatch event does not decode,
// when its seq is still known. Like MalformedUse it says first that the
// call did not run.
func MalformedDispatch(cause string) string {
	return NotExecuted("malformed dispatch event: " + cause)
}

// NotHosted answers a dispatch the router sent to a pool whose worker does
// not host the tool (the advertisement and the worker disagree).
func NotHosted(name, pool string) string {
	return fmt.Sprintf("No such tool available: %s (not hosted by pool %s)", name, pool)
}

// OutcomeUnknown answers a call that is not read-only whose worker died
// while it ran, or whose lease is gone: it may have had its effects, and it
// is not run a second time.
const OutcomeUnknown = "execution interrupted; outcome unknown (the worker running this call stopped, and the call is not read-only, so it was not run again)"

// Timeout says that a call of tool name ran past its timeout; the
// executor follows it with the error the tool returned.
func Timeout(name string, after time.Duration) string {
	return fmt.Sprintf("%s timed out after %s", name, after)
}

// Permissions (docs/tools.md, Permissions; docs/orchestration.md, Context
// modifiers).

// PlanMode answers a call of tool name, not read-only, in a turn in plan
// mode.
func PlanMode(name string) string {
	return fmt.Sprintf("Permission denied: the turn is in plan mode, and this %s call is not read-only. Leave plan mode with ExitPlanMode first.", name)
}

// RuleDenied answers a call a deny rule of the permission policy matches:
// rule as written in the policy, arg the argument it matched.
func RuleDenied(name, rule, arg string) string {
	return fmt.Sprintf("Permission to use %s was denied: the rule %s matches %q", name, rule, arg)
}

// ApprovalTimedOut answers a call whose approval request nobody answered
// within wait.
func ApprovalTimedOut(name string, wait time.Duration) string {
	return fmt.Sprintf("Permission to use %s was not given: nobody answered the approval request within %s", name, wait)
}

// Refused answers a call whose approval request the user refused; reason
// is the user's, if they gave one.
func Refused(name, reason string) string {
	why := "Permission to use " + name + " was refused by the user"
	if reason != "" {
		why += ": " + reason
	}
	return why
}

// Output: what the model reads in place of a tool's output
// (docs/orchestration.md, Results).

// Empty is the result of a call of tool name that succeeded with no output.
// It is also the default of a tool's EmptyText (tool.Definition), which the
// executor does not apply (docs/tools.md).
func Empty(name string) string {
	return fmt.Sprintf("(%s completed with no output)", name)
}

// The preview marks end the first characters of an output too long for the
// model (the tool's cap or what is left of the turn's); each begins on a new
// line. A tool that cut its output itself (tool.Result.Cut) counted it in
// bytes, and its stored copy is what it kept.

// Stored ends the preview of an output of chars characters stored whole as
// blob.
func Stored(chars int, blob string) string {
	return fmt.Sprintf("\n… [output too long: %d characters in all; the full output is stored as blob %s]", chars, blob)
}

// Truncated ends the preview of an output of chars characters that could
// not be stored.
func Truncated(chars int) string {
	return fmt.Sprintf("\n… [output truncated: %d characters in all]", chars)
}

// CutStored ends the preview of an output of total bytes, of which the tool
// kept the first kept, stored as blob.
func CutStored(total, kept int64, blob string) string {
	return fmt.Sprintf("\n… [output too long: %d bytes of output in all; the stored copy holds only the first %d bytes, as blob %s]", total, kept, blob)
}

// CutTruncated ends the preview of an output of total bytes, cut by the
// tool, whose kept part could not be stored.
func CutTruncated(total int64) string {
	return fmt.Sprintf("\n… [output truncated: %d bytes of output in all]", total)
}

// Reorder: calls whose result is missing or bad where it should be
// delivered (docs/orchestration.md, Order of delivery; Failures).

// Lost stands in for a result whose message is malformed; why is what is
// wrong with it.
func Lost(why string) string {
	return "the result of this call was lost: its message was malformed (" + why + ")"
}

// NeverArrived stands in for a result that never came while a later result
// (or the turn's end) waited for it the gap's deadline, waited.
func NeverArrived(waited time.Duration) string {
	return fmt.Sprintf("the result of this call never arrived: the turn waited %s for it after a later result (or the turn's end) was stored", waited)
}

// Client: calls the client could not send whole.

// TooLargeToSend is why a call whose tool_use event the NATS server refuses
// for its size is not run; the client sends it as the reason of an
// incomplete stand-in (so the model reads it after Incomplete's prefix).
// size is the event in bytes, maxPayload the server's max_payload.
func TooLargeToSend(size int, maxPayload int64) string {
	return fmt.Sprintf("its arguments were too large to send: the tool_use event is %d bytes, over the NATS server's max_payload of %d bytes", size, maxPayload)
}
