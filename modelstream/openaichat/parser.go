// Package openaichat reads OpenAI Chat Completions streams (format name
// "openai-chat"), as OpenAI and the many OpenAI-compatible servers send
// them, and reports their tool calls through the modelstream contract.
//
// Chat Completions has no per-call stop event, and servers in front of
// llama.cpp or vLLM interleave the fragments of parallel calls (index 0, 1,
// 0, 1, ...), so a call is complete when the top-level JSON value of its
// arguments closes (jsonwire.ValueEnd), whatever comes next: not when
// another call starts, as openai-python has it. A call whose arguments never
// started (a no-argument tool sends "" or nothing) is complete at the
// choice's finish_reason or at [DONE], as {}. A finish_reason of "length",
// "max_tokens" or "content_filter" cuts off the calls still open instead:
// they are reported incomplete. Any other finish_reason, "stop" included,
// completes them: the calls are trusted, as some servers say "stop" after
// tool calls. Calls are reported in Seq order: one whose arguments close
// while an earlier one is still open waits for it, keeping its own At.
//
// Fragments are matched to calls by their index; without an index by a new
// id; without either, they continue the call the previous fragment went to,
// unless they name another tool. A known index with a different id is a new
// call: some servers reuse index 0 for every call. An index first seen on a
// later fragment of a call that had none is taken as that call's. An id or
// name arrives once, or is resent in full (then it replaces, never appends);
// integer ids are kept as their text. Once a call's arguments have closed,
// a fragment for it that carries more than white space fails the stream,
// naming the call, unless it names a tool and carries no id of the call: then
// it starts a new call in the reused slot. Arguments are joined while still
// escaped and unescaped once, so that a character split between fragments
// survives, then parsed once, blank meaning {}. A call without a name is
// reported as not runnable.
//
// Errors sent after HTTP 200 are checked before the choices: an "error"
// event, a chunk with a non-null "error" field (OpenAI, SGLang, and
// OpenRouter inside a normal chunk) and vLLM's {"object":"error"}. A stream
// that ends without [DONE] and without a finish_reason is truncated. Only
// one choice is read, the first one the stream names (index 0 in practice):
// a request for several choices has no single set of calls to run. After
// [DONE] only blank events, comments and a repeated [DONE] may follow, and
// End is reported at EOF: any other event fails the stream, which would
// otherwise be dropped unseen.
package openaichat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/jsonwire"
	"github.com/toolwire/toolwire/modelstream/sse"
)

// Parser parses OpenAI Chat Completions streams; the zero value is ready to
// use, and as it keeps no state between Parse calls it is safe for
// concurrent use.
type Parser struct{}

var _ modelstream.Parser = (*Parser)(nil)

// New returns a Parser.
func New() *Parser { return &Parser{} }

// Parse reads one Chat Completions stream from r and reports its tool calls
// and its end to h, as modelstream.Parser describes.
//
// Parse checks ctx between events and before each call it reports; a read
// blocked on r is interrupted only by closing r, which an HTTP response body
// bound to ctx does by itself.
func (p *Parser) Parse(ctx context.Context, r io.Reader, h modelstream.Handler) error {
	s := &stream{ctx: ctx, h: h, byIndex: make(map[int]*toolCall), byID: make(map[string]*toolCall)}
	sr := sse.NewReader(r)
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("openaichat: %w", err)
		}
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return s.eof(sr.Offset())
		}
		if err != nil {
			// The handler still hears that the message ended, and how.
			at := sr.Offset()
			endErr := s.finish(at, fmt.Sprintf("read error after byte %d: %v", at, err))
			return errors.Join(fmt.Errorf("openaichat: read stream: %w", err), endErr)
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

	// msgID is the first chunk id, for synthesized call ids.
	msgID      string
	stopReason string
	// finished says a finish_reason was seen; terminated that [DONE] was.
	finished, terminated bool
	// choice is the index of the choice read, once choiceSet.
	choice    int
	choiceSet bool
	// calls holds the message's calls by seq; calls[:reported] are reported.
	calls    []*toolCall
	reported int
	// last is the call the latest fragment went to, which fragments without
	// index or id continue.
	last    *toolCall
	byIndex map[int]*toolCall
	byID    map[string]*toolCall
	// prevEnd is where the current event starts, for error messages.
	prevEnd int64

	// dec, w and plain are reused from chunk to chunk to spare allocations;
	// plain holds a fragment's arguments unescaped, for the call's ValueEnd.
	dec   decoder
	w     wireChunk
	plain []byte
}

// event handles one SSE event; done means the message has ended and End has
// been reported.
func (s *stream) event(ev sse.Event) (done bool, err error) {
	start := s.prevEnd
	s.prevEnd = ev.End

	data := bytes.TrimSpace(ev.Data)
	if s.terminated {
		return s.afterDone(ev, data, start)
	}
	if ev.Type == "error" {
		return true, s.finish(ev.End, fmt.Sprintf("error event %s: %s", span(start, ev.End), describeError(data)))
	}
	if len(data) == 0 {
		return false, nil
	}
	if string(data) == "[DONE]" {
		// End waits for EOF, to tell whether anything follows.
		s.terminated = true
		return false, s.closeOpen(ev.End, false)
	}
	w := &s.w
	decodeErr := s.dec.decodeChunk(data, w)
	if _, malformed := decodeErr.(*jsonwire.SyntaxError); malformed {
		return true, s.finish(ev.End, fmt.Sprintf("bad event data %s: %s", span(start, ev.End), jsonwire.Describe(decodeErr, "data")))
	}
	// Errors first: OpenRouter puts one in a chunk that may also have choices.
	if w.isError() {
		return true, s.finish(ev.End, fmt.Sprintf("error event %s: %s", span(start, ev.End), describeError(data)))
	}
	if decodeErr != nil {
		// A choice field of the wrong type could hide part of a call.
		return true, s.finish(ev.End, fmt.Sprintf("bad chunk %s: %s", span(start, ev.End), jsonwire.Describe(decodeErr, "data")))
	}
	if s.msgID == "" && len(w.ID) > 0 {
		s.msgID = string(w.ID)
	}
	for i := range w.Choices {
		c := &w.Choices[i]
		if !s.choiceSet {
			s.choice, s.choiceSet = c.Index, true
		}
		if c.Index != s.choice {
			continue
		}
		for j := range c.ToolCalls {
			if done, err := s.fragment(&c.ToolCalls[j], start, ev.End); done || err != nil {
				return true, err
			}
		}
		if c.HasFunctionCall {
			// The legacy single function call: a fragment without index or id.
			if done, err := s.fragment(&c.FunctionCall, start, ev.End); done || err != nil {
				return true, err
			}
		}
		if len(c.FinishReason) > 0 {
			if err := s.finishReason(string(c.FinishReason), ev.End); err != nil {
				return true, err
			}
		}
	}
	return false, nil
}

// fragment applies one tool-call fragment of the chunk spanning bytes
// start-end; done means the stream failed and End has been reported.
func (s *stream) fragment(f *wireToolCall, start, end int64) (done bool, err error) {
	if len(f.ID) == 0 && len(f.Name) == 0 && len(f.Arguments) == 0 && !f.ArgsObject {
		return false, nil // carries nothing, so starts nothing
	}
	// ValueEnd needs the text unescaped, but only its ASCII structure
	// matters: without a backslash the escaped text is that already.
	plain := f.Arguments
	if !f.ArgsObject && bytes.IndexByte(plain, '\\') >= 0 {
		s.plain = jsonwire.Unquote(s.plain[:0], f.Arguments)
		plain = s.plain
	}
	c, explicit := s.match(f)
	if c != nil && c.done {
		newName := len(f.Name) > 0 && string(f.Name) != c.name
		if !f.ArgsObject && jsonwire.Blank(plain) && !newName && (len(f.ID) == 0 || string(f.ID) == c.id) {
			return false, nil // a resent name or id, or white space: nothing new
		}
		if explicit || len(f.Name) == 0 {
			return true, s.finish(end, fmt.Sprintf("tool call fragment %s continues call %d (%s) after its arguments closed",
				span(start, end), c.seq, c.describe()))
		}
		c = nil // it names a tool: a new call in the reused index or after the last one
	}
	if c == nil {
		c = &toolCall{seq: len(s.calls), index: -1}
		s.calls = append(s.calls, c)
		if f.HasIndex {
			c.index = f.Index
			s.byIndex[f.Index] = c
		}
	}
	s.last = c
	if len(f.ID) > 0 && c.id == "" {
		c.id = string(f.ID)
		s.byID[c.id] = c
	}
	if len(f.Name) > 0 && string(f.Name) != c.name {
		c.name = string(f.Name) // a resent name replaces
	}
	if len(f.Arguments) == 0 {
		return false, nil
	}
	c.addArgs(f.Arguments, f.ArgsObject)
	if !c.value.Feed(plain) {
		return false, nil
	}
	c.finish(s.msgID, end)
	return false, s.flush()
}

// match finds the call a fragment is for, nil for a new one; explicit says
// the fragment carries that call's id.
func (s *stream) match(f *wireToolCall) (c *toolCall, explicit bool) {
	switch {
	case f.HasIndex:
		c = s.byIndex[f.Index]
		if c != nil && len(f.ID) > 0 && c.id != "" && string(f.ID) != c.id {
			c = nil // the index is reused by a new call
		}
		if last := s.last; c == nil && last != nil && !last.done && last.index < 0 && (len(f.ID) == 0 || string(f.ID) == last.id) {
			// The latest call came without an index and this fragment
			// names no other call: the index arrived late.
			c = last
			c.index = f.Index
			s.byIndex[f.Index] = c
		}
	case len(f.ID) > 0:
		c = s.byID[string(f.ID)]
	default:
		c = s.last
		if c != nil && len(f.Name) > 0 && c.name != "" && string(f.Name) != c.name {
			c = nil // another tool, so another call
		}
	}
	return c, c != nil && c.id != "" && string(f.ID) == c.id
}

// finishReason handles the choice's finish_reason, in the event ending at end.
func (s *stream) finishReason(reason string, end int64) error {
	s.stopReason, s.finished = reason, true
	return s.closeOpen(end, cutOff(reason))
}

// closeOpen ends every call still open at byte at: complete with what it
// has, or, when cut, as cut off by the finish_reason. Then it reports what
// can be reported.
func (s *stream) closeOpen(at int64, cut bool) error {
	for _, c := range s.calls[s.reported:] {
		switch {
		case c.done:
		case cut:
			c.abandon(s.msgID, at, incompleteReason("finish_reason "+s.stopReason))
		default:
			c.finish(s.msgID, at)
		}
	}
	return s.flush()
}

// flush reports the finished calls that no unfinished call precedes. One
// event can finish many, so ctx is checked before each.
func (s *stream) flush() error {
	for s.reported < len(s.calls) && s.calls[s.reported].done {
		if err := s.ctx.Err(); err != nil {
			return fmt.Errorf("openaichat: %w", err)
		}
		c := s.calls[s.reported]
		s.reported++
		if err := s.h.Call(s.ctx, c.call); err != nil {
			return fmt.Errorf("openaichat: handler: %w", err)
		}
	}
	return nil
}

// open reports whether a call is still being streamed.
func (s *stream) open() bool {
	for _, c := range s.calls[s.reported:] {
		if !c.done {
			return true
		}
	}
	return false
}

// afterDone handles an event after [DONE], whose data is data and which
// starts at byte start: blank ones, comments and a repeated [DONE] change
// nothing, anything else fails the stream.
func (s *stream) afterDone(ev sse.Event, data []byte, start int64) (done bool, err error) {
	if ev.Type == "" && (len(data) == 0 || string(data) == "[DONE]") {
		return false, nil
	}
	return true, s.finish(ev.End, fmt.Sprintf("stream continues after [DONE]: another event %s", span(start, ev.End)))
}

// eof ends the stream at byte at. After [DONE] that is the normal end;
// after only a finish_reason it is a missing terminator; before one, or
// inside a call, the stream was cut short.
func (s *stream) eof(at int64) error {
	switch {
	case s.terminated:
	case !s.finished:
		return s.finish(at, fmt.Sprintf("stream truncated at byte %d: it ended without [DONE] or a finish_reason", at))
	case s.open():
		return s.finish(at, fmt.Sprintf("stream truncated at byte %d: it ended without [DONE] inside a tool call", at))
	}
	return s.finish(at, "")
}

// finish ends the message at byte at: it reports every call not reported
// yet, those still open as incomplete, then End with failure as its Err.
func (s *stream) finish(at int64, failure string) error {
	cause := failure
	if s.stopReason != "" {
		cause = strings.TrimSuffix("finish_reason "+s.stopReason+"; "+failure, "; ")
	}
	for _, c := range s.calls[s.reported:] {
		if !c.done {
			c.abandon(s.msgID, at, incompleteReason(cause))
		}
	}
	if err := s.flush(); err != nil {
		return err
	}
	end := modelstream.End{Calls: len(s.calls), StopReason: s.stopReason, Err: failure}
	if err := s.h.End(s.ctx, end); err != nil {
		return fmt.Errorf("openaichat: handler: %w", err)
	}
	return nil
}

func span(start, end int64) string { return fmt.Sprintf("at bytes %d-%d", start, end) }
