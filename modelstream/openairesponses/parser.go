// Package openairesponses reads OpenAI Responses API streams (format name
// "openai-responses") and reports their tool calls through the modelstream
// contract.
//
// Client tool calls are the output items the client must execute:
// function_call, custom_tool_call, local_shell_call, shell_call (unless its
// environment is a hosted container), apply_patch_call and
// tool_search_call with execution "client". Each is reported as a call, so
// that its call_id is always answered: a tool registered under the call's
// name runs it, any other gets the usual unknown-tool result. Items OpenAI
// runs itself (web search, MCP, code interpreter, a hosted shell...),
// reasoning and messages are not calls. items.go holds the names and input
// shapes, which docs/stream-formats.md documents.
//
// A function_call is complete at response.function_call_arguments.done
// (the full arguments; the name comes from output_item.added), a
// custom_tool_call at response.custom_tool_call_input.done, any of them at
// response.output_item.done (the whole item), whichever comes first, and is
// reported once; the other kinds hold their input only in the done item.
// When a done event comes for an item whose name is not known yet, the call
// waits for output_item.done. A done item whose status is "incomplete" or
// "failed" is not runnable. The call's ID is its call_id, which tool
// results cite, taken from the done item when it differs from the added
// one, or the item id when there is no call_id. Argument text is joined
// while still escaped and unescaped once, then parsed once, blank meaning
// {}.
//
// An event whose data is not valid JSON is skipped when its type (read
// before the fault, else the event name) says it cannot hold part of a
// call nor end the response: a broken response.created or text delta costs
// nothing, so it is counted in End.Warnings instead of failing the stream.
// An unreadable event of a call, a final event, or one of no known type
// fails it.
//
// Items are matched by item id, else by output_index, and calls get their
// Seq in the order their items first appear. OpenAI streams one item after
// another, but should items interleave, a call that completes while an
// earlier one is still open is held back and reported right after it, so
// calls always arrive in Seq order.
//
// The stream ends with response.completed (stop reason "completed"),
// response.incomplete (the incomplete_details reason, e.g.
// "max_output_tokens", else "incomplete"; open calls are incomplete) or
// response.failed (stop reason "failed"); an error event ends it too. These
// final events repeat the whole output: a client item found only there is
// reported at that event, complete if its status says so. EOF
// before any of them means the stream was truncated. After
// response.completed or response.incomplete only [DONE], comments and blank
// events may follow, and End is reported at EOF: any other event fails the
// stream, which would otherwise be dropped unseen. Events can be megabytes
// long; the SSE reader has no line cap.
package openairesponses

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/jsonwire"
	"github.com/toolwire/toolwire/modelstream/sse"
)

// Parser parses OpenAI Responses streams; the zero value is ready to use,
// and as it keeps no state between Parse calls it is safe for concurrent use.
type Parser struct{}

var _ modelstream.Parser = (*Parser)(nil)

// New returns a Parser.
func New() *Parser { return &Parser{} }

// Parse reads one Responses stream from r and reports its tool calls and
// its end to h, as modelstream.Parser describes.
//
// Parse checks ctx between events; a read blocked on r is interrupted only by
// closing r, which an HTTP response body bound to ctx does by itself.
func (p *Parser) Parse(ctx context.Context, r io.Reader, h modelstream.Handler) error {
	s := &stream{ctx: ctx, h: h, byItemID: make(map[string]*itemCall), byOutput: make(map[int]*itemCall)}
	sr := sse.NewReader(r)
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("openairesponses: %w", err)
		}
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			at := sr.Offset()
			if s.final != "" {
				return s.finish(at, "")
			}
			return s.finish(at, fmt.Sprintf(
				"stream truncated at byte %d: it ended before response.completed, response.incomplete or response.failed", at))
		}
		if err != nil {
			// The handler still hears that the message ended, and how.
			at := sr.Offset()
			endErr := s.finish(at, fmt.Sprintf("read error after byte %d: %v", at, err))
			return errors.Join(fmt.Errorf("openairesponses: read stream: %w", err), endErr)
		}
		if done, err := s.event(ev); done || err != nil {
			return err
		}
	}
}

// stream is the state of one Parse.
type stream struct {
	ctx context.Context
	h   modelstream.Handler

	// respID is the response id, for synthesized call ids.
	respID     string
	stopReason string
	// final is the type of the final event seen, "" before it; End waits
	// for EOF, to tell whether anything follows.
	final string
	// calls holds the client-executed items by seq; calls[:reported] are reported.
	calls    []*itemCall
	reported int
	byItemID map[string]*itemCall
	byOutput map[int]*itemCall
	// prevEnd is where the current event starts, for error messages.
	prevEnd int64
	// warnings counts the events skipped; warning describes the first.
	warnings int
	warning  string

	// dec and w are reused from event to event to spare allocations.
	dec decoder
	w   wireEvent
}

// event handles one SSE event; done means the response has ended and End
// has been reported.
func (s *stream) event(ev sse.Event) (done bool, err error) {
	start := s.prevEnd
	s.prevEnd = ev.End

	data := bytes.TrimSpace(ev.Data)
	if s.final != "" {
		if ev.Type == "" && (len(data) == 0 || string(data) == "[DONE]") {
			return false, nil
		}
		return true, s.finish(ev.End, fmt.Sprintf("stream continues after %s: another event %s", s.final, span(start, ev.End)))
	}
	// Blank data carries nothing, and [DONE] is a Chat Completions
	// terminator some servers append here too; neither ends a response.
	if len(data) == 0 || string(data) == "[DONE]" {
		if ev.Type == "error" {
			return true, s.finish(ev.End, fmt.Sprintf("error event %s: no data", span(start, ev.End)))
		}
		return false, nil
	}
	w := &s.w
	decodeErr := s.dec.decodeEvent(data, w)
	if _, malformed := decodeErr.(*jsonwire.SyntaxError); malformed {
		if ev.Type == "error" {
			return true, s.finish(ev.End, fmt.Sprintf("error event %s: %s", span(start, ev.End), clip(data)))
		}
		// The type, when it came before the fault, or the event name says
		// what was lost; only a call's own data, or the end, is worth failing for.
		kind := w.Type
		if kind == "" {
			kind = ev.Type
		}
		if kind != "" && !mayHoldCall(kind) {
			s.warn(fmt.Sprintf("skipped unreadable %s event %s: %s", clipType(kind), span(start, ev.End), jsonwire.Describe(decodeErr, "data")))
			return false, nil
		}
		return true, s.finish(ev.End, fmt.Sprintf("bad event data %s: %s", span(start, ev.End), jsonwire.Describe(decodeErr, "data")))
	}
	typ := w.Type
	switch {
	case ev.Type == "error":
		typ = ev.Type
	case typ == "" && len(w.Error) > 0 && !jsonwire.IsNull(w.Error):
		// A gateway's {"error":{...}} without a type is still an error.
		typ = "error"
	case typ == "":
		// The event name is the type when the data does not say.
		typ = ev.Type
	}
	bad := func() (bool, error) {
		return true, s.finish(ev.End, fmt.Sprintf("bad %s event %s: %s", typ, span(start, ev.End), jsonwire.Describe(decodeErr, "data")))
	}

	switch typ {
	case "response.created", "response.in_progress", "response.queued":
		if s.respID == "" && len(w.Response.ID) > 0 {
			s.respID = string(w.Response.ID)
		}
	case "response.output_item.added", "response.output_item.done":
		// A wrong-typed field would lose part of a call; in other items it is harmless.
		kind := kindOf(&w.Item)
		if decodeErr != nil && (kind != notClient || len(w.Item.Type) == 0 || isCallType(w.Item.Type)) {
			return bad()
		}
		if kind == notClient {
			return false, nil
		}
		return false, s.item(typ == "response.output_item.done", kind, w, ev.End)
	case "response.function_call_arguments.delta", "response.function_call_arguments.done":
		if decodeErr != nil {
			return bad()
		}
		return false, s.arguments(typ == "response.function_call_arguments.done", functionCall, w, ev.End)
	case "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done":
		if decodeErr != nil {
			return bad()
		}
		return false, s.arguments(typ == "response.custom_tool_call_input.done", customToolCall, w, ev.End)
	case "response.completed", "response.incomplete":
		s.stopReason = "completed"
		if typ == "response.incomplete" {
			s.stopReason = "incomplete"
			if len(w.Response.IncompleteReason) > 0 {
				s.stopReason = string(w.Response.IncompleteReason)
			}
		}
		// With a wrong-typed field the output may be partial: trust only the events.
		if decodeErr == nil {
			if err := s.fromOutput(w.Response.Output, ev.End); err != nil {
				return true, err
			}
		}
		s.final = typ
		return false, s.closeOpen(ev.End, "")
	case "response.failed":
		s.stopReason = "failed"
		why := "no error details"
		if len(w.Response.Error) > 0 && !jsonwire.IsNull(w.Response.Error) {
			if why = describePayload(w.Response.Error); why == "" {
				why = clip(w.Response.Error)
			}
		}
		return true, s.finish(ev.End, fmt.Sprintf("response.failed %s: %s", span(start, ev.End), why))
	case "error":
		return true, s.finish(ev.End, fmt.Sprintf("error event %s: %s", span(start, ev.End), describeError(data)))
	}
	// Text, reasoning, other items' events and unknown events carry no client call.
	return false, nil
}

// item handles output_item.added, or output_item.done when done, for an
// item of a client call of kind, in the event ending at byte end.
func (s *stream) item(done bool, kind itemKind, w *wireEvent, end int64) error {
	it := &w.Item
	c := s.lookup(it.ID, w.OutputIndex, w.HasOutputIndex)
	if c == nil {
		c = s.add(kind, w.OutputIndex, w.HasOutputIndex)
	}
	if c.done {
		return nil // completed by its arguments or input done event already
	}
	c.fill(kind, it, done)
	s.index(c)
	if !done {
		return nil
	}
	if v, raw, ok := kind.input(it); ok {
		c.setFinal(v, raw)
	}
	if status := string(it.Status); status == "incomplete" || status == "failed" {
		c.abandon(s.respID, end, fmt.Sprintf("tool call incomplete: the %s item's status is %s", kind.typeName(), status))
	} else {
		c.finish(s.respID, end)
	}
	return s.flush()
}

// arguments handles the delta events of a function_call's arguments or a
// custom_tool_call's input (kind), or their done event when done, in the
// event ending at byte end.
func (s *stream) arguments(done bool, kind itemKind, w *wireEvent, end int64) error {
	c := s.lookup(w.ItemID, w.OutputIndex, w.HasOutputIndex)
	if c == nil {
		// No output_item.added: keep the call, so it is not lost unseen.
		c = s.add(kind, w.OutputIndex, w.HasOutputIndex)
		c.itemID = string(w.ItemID)
		s.index(c)
	}
	if c.done {
		return nil
	}
	if !done {
		c.deltas = append(c.deltas, w.Delta...)
		return nil
	}
	if len(w.Name) > 0 && itemKinds[c.kind].tool == "" {
		c.name = string(w.Name)
	}
	switch {
	case w.HasArguments:
		c.setFinal(w.Arguments, false)
	case w.HasInput:
		c.setFinal(w.Input, false)
	default:
		c.setFinal(c.deltas, false)
	}
	if c.name == "" {
		return nil // output_item.done will say which function this is
	}
	c.finish(s.respID, end)
	return s.flush()
}

// fromOutput reports the client items of a final event's output that the
// events did not complete, at byte end: complete when their status is
// "completed" (or absent), else left for finish to report as incomplete.
func (s *stream) fromOutput(output []wireItem, end int64) error {
	for i := range output {
		it := &output[i]
		kind := kindOf(it)
		if kind == notClient {
			continue
		}
		c := s.lookup(it.ID, i, true)
		if c == nil && len(it.CallID) > 0 {
			for _, k := range s.calls {
				if k.callID == string(it.CallID) {
					c = k
					break
				}
			}
		}
		if c == nil {
			c = s.add(kind, i, true)
		}
		if c.done {
			continue
		}
		c.fill(kind, it, true)
		s.index(c)
		if v, raw, ok := kind.input(it); ok {
			c.setFinal(v, raw)
		}
		if status := string(it.Status); status == "" || status == "completed" {
			c.finish(s.respID, end)
		}
	}
	return s.flush()
}

// lookup finds the call of an item by its id, else by its output index,
// unless that slot holds an item with another id.
func (s *stream) lookup(itemID []byte, outputIndex int, hasIndex bool) *itemCall {
	if len(itemID) > 0 {
		if c := s.byItemID[string(itemID)]; c != nil {
			return c
		}
	}
	if hasIndex {
		if c := s.byOutput[outputIndex]; c != nil && (len(itemID) == 0 || c.itemID == "") {
			return c
		}
	}
	return nil
}

// add starts a new call of kind.
func (s *stream) add(kind itemKind, outputIndex int, hasIndex bool) *itemCall {
	c := &itemCall{seq: len(s.calls), kind: kind, outputIndex: -1}
	if hasIndex {
		c.outputIndex = outputIndex
		s.byOutput[outputIndex] = c
	}
	s.calls = append(s.calls, c)
	return c
}

// index makes c findable by its item id.
func (s *stream) index(c *itemCall) {
	if c.itemID != "" && s.byItemID[c.itemID] == nil {
		s.byItemID[c.itemID] = c
	}
}

// flush reports the finished calls that no unfinished call precedes.
func (s *stream) flush() error {
	for s.reported < len(s.calls) && s.calls[s.reported].done {
		c := s.calls[s.reported]
		s.reported++
		if err := s.h.Call(s.ctx, c.call); err != nil {
			return fmt.Errorf("openairesponses: handler: %w", err)
		}
	}
	return nil
}

// closeOpen reports every call not reported yet, those still open as
// incomplete for failure at byte at.
func (s *stream) closeOpen(at int64, failure string) error {
	for _, c := range s.calls[s.reported:] {
		if !c.done {
			c.abandon(s.respID, at, incompleteReason(c.kind.typeName(), s.stopReason, failure))
		}
	}
	return s.flush()
}

// finish ends the response at byte at: it reports every call not reported
// yet, those still open as incomplete, then End with failure as its Err.
func (s *stream) finish(at int64, failure string) error {
	if err := s.closeOpen(at, failure); err != nil {
		return err
	}
	end := modelstream.End{Calls: len(s.calls), StopReason: s.stopReason, Err: failure, Warnings: s.warnings, Warning: s.warning}
	if err := s.h.End(s.ctx, end); err != nil {
		return fmt.Errorf("openairesponses: handler: %w", err)
	}
	return nil
}

// warn records something skipped without failing the stream.
func (s *stream) warn(msg string) {
	if s.warnings == 0 {
		s.warning = msg
	}
	s.warnings++
}

// mayHoldCall reports whether an event of type typ can carry part of a
// client call or end the response, so that losing it unread would lose a
// call or the response's outcome. Text, reasoning, lifecycle events and
// the events of items run on OpenAI's side cannot.
func mayHoldCall(typ string) bool {
	switch typ {
	case "error", "response.completed", "response.incomplete", "response.failed":
		return true
	}
	for _, prefix := range [...]string{
		"response.output_item.",
		"response.function_call_arguments.",
		"response.custom_tool_call_input.",
		"response.shell_call_command.",
		"response.apply_patch_call_operation_diff.",
	} {
		if strings.HasPrefix(typ, prefix) {
			return true
		}
	}
	return false
}

// maxTypeLen bounds an event type quoted in a warning: it comes from the stream.
const maxTypeLen = 80

func clipType(typ string) string {
	if len(typ) > maxTypeLen {
		return strconv.Quote(typ[:maxTypeLen]) + "..."
	}
	return typ
}

func span(start, end int64) string { return fmt.Sprintf("at bytes %d-%d", start, end) }
