// Package gemini reads Gemini streamGenerateContent?alt=sse streams (the
// Gemini API and Vertex AI) and reports their tool calls through the
// modelstream contract.
//
// Every data event is a whole GenerateContentResponse. A functionCall part
// is a complete call the moment it arrives, and each part is its own call,
// whether parallel calls share a chunk or come in several: args is the
// input (omitted means {}), id the call id when Gemini 3 sends one, else a
// hash of the call (see syntheticID). thoughtSignature is not input and is
// left out. Only candidate 0 is read: other candidates are alternatives,
// not more calls.
//
// Vertex can stream a call's arguments: a part {name, willContinue:true}
// opens the call, parts {partialArgs:[{jsonPath, stringValue|numberValue|
// boolValue|nullValue, willContinue}], willContinue:true} fill it, and the
// first part whose willContinue is false or omitted ends it (usually an
// empty functionCall:{}; for array arguments the last partialArgs part
// itself, vercel/ai#14358). The arguments object is built from the RFC 9535
// paths; a string whose partialArg says willContinue goes on in the next
// part for the same path. Should the closing part never come, the call
// completes at the chunk with finishReason STOP (vercel/ai#15438); any
// other finishReason, a new call, an error or EOF leaves it incomplete.
//
// There is no [DONE]: the stream ends at EOF, and End is reported there,
// with finishReason (STOP also for calls) as the stop reason. EOF before
// any finishReason is a truncated stream. An {"error":{...}} chunk ends the
// stream with its code, status and message in End.Err, and so does a raw,
// non-SSE error body written after the last event (lineWatch).
package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/sse"
)

// Parser parses Gemini streams; the zero value is ready to use, and as it
// keeps no state between Parse calls it is safe for concurrent use.
type Parser struct{}

var _ modelstream.Parser = (*Parser)(nil)

// New returns a Parser.
func New() *Parser { return &Parser{} }

// Parse reads one Gemini stream from r and reports its tool calls and its
// end to h, as modelstream.Parser describes.
//
// Parse checks ctx between events and before each call it reports; a read
// blocked on r is interrupted only by closing r, which an HTTP response body
// bound to ctx does by itself.
func (p *Parser) Parse(ctx context.Context, r io.Reader, h modelstream.Handler) error {
	s := &stream{ctx: ctx, h: h}
	w := newLineWatch(r)
	sr := sse.NewReader(w)
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("gemini: %w", err)
		}
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return s.eof(sr.Offset(), w)
		}
		if err != nil {
			// The handler still hears that the message ended, and how.
			at := sr.Offset()
			endErr := s.finish(at, fmt.Sprintf("read error after byte %d: %v", at, err))
			return errors.Join(fmt.Errorf("gemini: read stream: %w", err), endErr)
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

	responseID string
	stopReason string
	// finished says a finishReason (or a prompt blockReason) was seen.
	finished bool
	// open is the streamed call whose closing part has not come yet.
	open *callBuilder
	// calls counts the calls reported.
	calls int
	// prevEnd is where the current event starts, for error messages.
	prevEnd int64
}

// event handles one SSE event; done means End has been reported.
func (s *stream) event(ev sse.Event) (done bool, err error) {
	start := s.prevEnd
	s.prevEnd = ev.End
	at := func() string { return fmt.Sprintf("at bytes %d-%d", start, ev.End) }

	data := bytes.TrimSpace(ev.Data)
	// Blank data carries nothing, and [DONE] is an OpenAI-style terminator
	// some gateways append.
	if len(data) == 0 || string(data) == "[DONE]" {
		if ev.Type == "error" {
			return true, s.finish(ev.End, "error event with no data "+at())
		}
		return false, nil
	}
	var c wireChunk
	if err := json.Unmarshal(data, &c); err != nil {
		if ev.Type == "error" {
			return true, s.finish(ev.End, fmt.Sprintf("error event %s: %s", at(), clip(data)))
		}
		return true, s.finish(ev.End, fmt.Sprintf("bad chunk data %s: %s", at(), describeJSONError(err, "data")))
	}
	if len(c.Error) > 0 && !isNull(c.Error) {
		return true, s.finish(ev.End, fmt.Sprintf("error chunk %s: %s", at(), describeError(c.Error)))
	}
	if ev.Type == "error" {
		return true, s.finish(ev.End, fmt.Sprintf("error event %s: %s", at(), clip(data)))
	}
	if s.responseID == "" {
		s.responseID = c.ResponseID
	}
	for i := range c.Candidates {
		cand := &c.Candidates[i]
		if cand.Index != 0 {
			continue
		}
		if cand.Content != nil {
			for j := range cand.Content.Parts {
				if fc := cand.Content.Parts[j].FunctionCall; fc != nil {
					if err := s.part(fc, ev.End, at); err != nil {
						return true, err
					}
				}
			}
		}
		if cand.FinishReason != "" {
			s.stopReason, s.finished = cand.FinishReason, true
			if err := s.closeAtFinish(ev.End); err != nil {
				return true, err
			}
		}
	}
	if pf := c.PromptFeedback; pf != nil && pf.BlockReason != "" && !s.finished {
		s.stopReason, s.finished = pf.BlockReason, true
	}
	return false, nil
}

// part handles one functionCall part of candidate 0, in an event ending at byte end.
func (s *stream) part(fc *wireFunctionCall, end int64, at func() string) error {
	if fc.Name != "" {
		if s.open != nil {
			b := s.open
			s.open = nil
			why := incompleteReason("a new functionCall began " + at() + " before its last part")
			if err := s.report(b.abandon(s.responseID, end, why)); err != nil {
				return err
			}
		}
		b := &callBuilder{seq: s.calls, id: fc.ID, name: fc.Name, args: fc.Args}
		if fc.WillContinue || len(fc.PartialArgs) > 0 {
			b.startTree()
			b.applyPartial(fc.PartialArgs)
		}
		if fc.WillContinue {
			s.open = b
			return nil
		}
		return s.report(b.complete(s.responseID, end))
	}
	b := s.open
	if b == nil {
		if !fc.hasArgs() {
			return nil // a stray closing part, or an empty one
		}
		b = &callBuilder{seq: s.calls, id: fc.ID, args: fc.Args}
		if len(fc.PartialArgs) > 0 {
			b.startTree()
			b.applyPartial(fc.PartialArgs)
		}
		return s.report(b.abandon(s.responseID, end,
			"tool call has no name: a functionCall part "+at()+" carries arguments, but no name, and no streamed call is open"))
	}
	if b.id == "" {
		b.id = fc.ID
	}
	b.mergeArgs(fc.Args)
	b.applyPartial(fc.PartialArgs)
	if fc.WillContinue {
		return nil
	}
	s.open = nil
	return s.report(b.complete(s.responseID, end))
}

// closeAtFinish ends a streamed call still open when finishReason arrives at
// byte end: STOP means the model finished it and only the closing part is
// missing; any other reason cut it off.
func (s *stream) closeAtFinish(end int64) error {
	b := s.open
	if b == nil {
		return nil
	}
	s.open = nil
	if s.stopReason == "STOP" {
		return s.report(b.complete(s.responseID, end))
	}
	return s.report(b.abandon(s.responseID, end, incompleteReason("finishReason "+s.stopReason)))
}

// report hands one call to the handler.
func (s *stream) report(c modelstream.Call) error {
	if err := s.ctx.Err(); err != nil {
		return fmt.Errorf("gemini: %w", err)
	}
	s.calls++
	if err := s.h.Call(s.ctx, c); err != nil {
		return fmt.Errorf("gemini: handler: %w", err)
	}
	return nil
}

// eof ends the message at the end of the input, byte at.
func (s *stream) eof(at int64, w *lineWatch) error {
	var failure string
	switch {
	case w.tailStart >= 0:
		failure = fmt.Sprintf("non-SSE data after the last event, at bytes %d-%d: %s",
			w.tailStart, at, describeTail(w.tail, w.clipped))
	case !s.finished:
		failure = fmt.Sprintf("stream ended before a finishReason at byte %d", at)
	case s.open != nil:
		failure = fmt.Sprintf("stream ended inside a streamed functionCall at byte %d", at)
	}
	return s.finish(at, failure)
}

// finish ends the message at byte at: it reports the open streamed call, if
// any, as incomplete, then End with failure as its Err.
func (s *stream) finish(at int64, failure string) error {
	if b := s.open; b != nil {
		s.open = nil
		var stop string
		if s.stopReason != "" {
			stop = "finishReason " + s.stopReason
		}
		if err := s.report(b.abandon(s.responseID, at, incompleteReason(stop, failure))); err != nil {
			return err
		}
	}
	end := modelstream.End{Calls: s.calls, StopReason: s.stopReason, Err: failure}
	if err := s.h.End(s.ctx, end); err != nil {
		return fmt.Errorf("gemini: handler: %w", err)
	}
	return nil
}
