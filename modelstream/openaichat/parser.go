// Package openaichat reads OpenAI Chat Completions streams (format name
// "openai-chat"), as OpenAI and the many OpenAI-compatible servers send
// them, and reports their tool calls through the modelstream contract.
//
// Chat Completions has no per-call stop event. As in openai-python, the call
// being streamed is complete when a fragment starts another call, when the
// choice's finish_reason is set, or at [DONE]; so at most one call is open at
// a time and calls are reported in order. A finish_reason of "length",
// "max_tokens" or "content_filter" cuts the open call off instead: it is
// reported incomplete even if its text happens to parse. Any other
// finish_reason, "stop" included, completes it: the calls are trusted, as
// some servers say "stop" after tool calls.
//
// Fragments are matched to calls by their index; without an index by a new
// id; without either, they continue the open call, unless they name another
// tool. A known index with a different id is a new call: some servers reuse
// index 0 for every call. An index first seen on a later fragment of a call
// that had none is taken as that call's. An id or name arrives once, or is resent in full
// (then it replaces, never appends); integer ids are kept as their text. A
// fragment for a call already reported means the stream interleaves calls,
// which cannot be parsed with certainty: the stream fails there. Arguments
// are joined while still escaped and unescaped once, so that a character
// split between fragments survives, then parsed once, blank meaning {}. A
// call without a name is reported as not runnable.
//
// Errors sent after HTTP 200 are checked before the choices: an "error"
// event, a chunk with a non-null "error" field (OpenAI, SGLang, and
// OpenRouter inside a normal chunk) and vLLM's {"object":"error"}. A stream
// that ends without [DONE] and without a finish_reason is truncated. Only
// one choice is read, the first one the stream names (index 0 in practice):
// a request for several choices has no single set of calls to run. Parsing
// stops at [DONE].
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
// Parse checks ctx between events; a read blocked on r is interrupted only by
// closing r, which an HTTP response body bound to ctx does by itself.
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
	// finished says a finish_reason was seen.
	finished bool
	// choice is the index of the choice read, once choiceSet.
	choice    int
	choiceSet bool
	// calls counts the calls started; the next call's seq.
	calls int
	// open is the call being streamed, nil when none is; every other call
	// has been reported.
	open    *toolCall
	byIndex map[int]*toolCall
	byID    map[string]*toolCall
	// prevEnd is where the current event starts, for error messages.
	prevEnd int64

	// dec and w are reused from chunk to chunk to spare allocations.
	dec decoder
	w   wireChunk
}

// event handles one SSE event; done means the message has ended and End has
// been reported.
func (s *stream) event(ev sse.Event) (done bool, err error) {
	start := s.prevEnd
	s.prevEnd = ev.End

	data := bytes.TrimSpace(ev.Data)
	if ev.Type == "error" {
		return true, s.finish(ev.End, fmt.Sprintf("error event %s: %s", span(start, ev.End), describeError(data)))
	}
	if len(data) == 0 {
		return false, nil
	}
	if string(data) == "[DONE]" {
		if err := s.close(ev.End); err != nil {
			return true, err
		}
		return true, s.finish(ev.End, "")
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
	var c *toolCall
	switch {
	case f.HasIndex:
		c = s.byIndex[f.Index]
		if c != nil && len(f.ID) > 0 && c.id != "" && string(f.ID) != c.id {
			c = nil // the index is reused by a new call
		}
		if c == nil && s.open != nil && s.open.index < 0 && (len(f.ID) == 0 || string(f.ID) == s.open.id) {
			// The open call came without an index and this fragment names
			// no other call: the index arrived late.
			c = s.open
			c.index = f.Index
			s.byIndex[f.Index] = c
		}
	case len(f.ID) > 0:
		c = s.byID[string(f.ID)]
	default:
		c = s.open
		if c != nil && len(f.Name) > 0 && c.name != "" && string(f.Name) != c.name {
			c = nil // another tool, so another call
		}
	}
	switch {
	case c == nil:
		if err := s.close(end); err != nil {
			return true, err
		}
		c = &toolCall{seq: s.calls, index: -1}
		s.calls++
		if f.HasIndex {
			c.index = f.Index
			s.byIndex[f.Index] = c
		}
		s.open = c
	case c.done:
		if len(f.Arguments) == 0 && !f.ArgsObject && (len(f.Name) == 0 || string(f.Name) == c.name) &&
			(len(f.ID) == 0 || string(f.ID) == c.id) {
			return false, nil // a resent name or id, or empty arguments: nothing new
		}
		return true, s.finish(end, fmt.Sprintf(
			"tool call fragment %s is for call %d, which was already reported: the stream interleaves tool calls",
			span(start, end), c.seq))
	}
	if len(f.ID) > 0 && c.id == "" {
		c.id = string(f.ID)
		s.byID[c.id] = c
	}
	if len(f.Name) > 0 && string(f.Name) != c.name {
		c.name = string(f.Name) // a resent name replaces
	}
	c.addArgs(f.Arguments, f.ArgsObject)
	return false, nil
}

// finishReason handles the choice's finish_reason, in the event ending at end.
func (s *stream) finishReason(reason string, end int64) error {
	s.stopReason, s.finished = reason, true
	if s.open != nil && cutOff(reason) {
		return s.abandon(end, "finish_reason "+reason)
	}
	return s.close(end)
}

// close reports the open call, if any, as ended normally at byte at.
func (s *stream) close(at int64) error {
	if s.open == nil {
		return nil
	}
	c := s.open
	s.open = nil
	return s.report(c.finish(s.msgID, at))
}

// abandon reports the open call, if any, as incomplete for cause.
func (s *stream) abandon(at int64, cause string) error {
	if s.open == nil {
		return nil
	}
	c := s.open
	s.open = nil
	return s.report(c.abandon(s.msgID, at, incompleteReason(cause)))
}

func (s *stream) report(c modelstream.Call) error {
	if err := s.h.Call(s.ctx, c); err != nil {
		return fmt.Errorf("openaichat: handler: %w", err)
	}
	return nil
}

// eof ends a stream that stopped without [DONE] at byte at. After a
// finish_reason that is only a missing terminator; before one, or inside a
// call, the stream was cut short.
func (s *stream) eof(at int64) error {
	switch {
	case !s.finished:
		return s.finish(at, fmt.Sprintf("stream truncated at byte %d: it ended without [DONE] or a finish_reason", at))
	case s.open != nil:
		return s.finish(at, fmt.Sprintf("stream truncated at byte %d: it ended without [DONE] inside a tool call", at))
	}
	return s.finish(at, "")
}

// finish ends the message at byte at: it reports the open call, if any, as
// incomplete, then End with failure as its Err.
func (s *stream) finish(at int64, failure string) error {
	if s.open != nil {
		cause := failure
		if s.stopReason != "" {
			cause = strings.TrimSuffix("finish_reason "+s.stopReason+"; "+failure, "; ")
		}
		if err := s.abandon(at, cause); err != nil {
			return err
		}
	}
	end := modelstream.End{Calls: s.calls, StopReason: s.stopReason, Err: failure}
	if err := s.h.End(s.ctx, end); err != nil {
		return fmt.Errorf("openaichat: handler: %w", err)
	}
	return nil
}

func span(start, end int64) string { return fmt.Sprintf("at bytes %d-%d", start, end) }
