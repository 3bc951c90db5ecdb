// Package anthropic reads Anthropic Messages API streams and reports their
// tool calls through the modelstream contract.
//
// A tool_use block becomes a call at its content_block_stop: the
// input_json_delta fragments are joined and parsed once, blank text meaning
// {}. server_tool_use blocks run on Anthropic's side and are not calls. Blocks
// are keyed by their index. Anthropic streams one block after another, but
// should blocks interleave, a call that completes while an earlier one is
// still open is held back and reported right after it, so calls always arrive
// in Seq order; holding is the simple way to keep that promise.
//
// After message_stop only ping, [DONE], comments and blank events may
// follow, and End is reported at EOF: any other event fails the stream,
// which would otherwise be dropped unseen. Event data
// is read by a small JSON decoder of its own (decode.go) that materializes
// only the fields the parser needs, several times faster than encoding/json.
package anthropic

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/jsonwire"
	"github.com/toolwire/toolwire/modelstream/sse"
)

// Parser parses Anthropic Messages streams; the zero value is ready to use,
// and as it keeps no state between Parse calls it is safe for concurrent use.
type Parser struct{}

var _ modelstream.Parser = (*Parser)(nil)

// New returns a Parser.
func New() *Parser { return &Parser{} }

// Parse reads one Anthropic Messages stream from r and reports its tool calls
// and its end to h, as modelstream.Parser describes.
//
// Parse checks ctx between events; a read blocked on r is interrupted only by
// closing r, which an HTTP response body bound to ctx does by itself.
func (p *Parser) Parse(ctx context.Context, r io.Reader, h modelstream.Handler) error {
	s := &stream{ctx: ctx, h: h, blocks: make(map[int]int)}
	sr := sse.NewReader(r)
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("anthropic: %w", err)
		}
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			at := sr.Offset()
			if s.stopped {
				return s.finish(at, "")
			}
			return s.finish(at, fmt.Sprintf("stream ended before message_stop at byte %d", at))
		}
		if err != nil {
			// The handler still hears that the message ended, and how.
			at := sr.Offset()
			endErr := s.finish(at, fmt.Sprintf("read error after byte %d: %v", at, err))
			return errors.Join(fmt.Errorf("anthropic: read stream: %w", err), endErr)
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

	started bool
	// stopped says message_stop was seen; End waits for EOF, to tell
	// whether anything follows.
	stopped    bool
	msgID      string
	stopReason string
	// blocks maps each started content-block index to its call's seq, or to
	// -1 for blocks that are not tool calls.
	blocks map[int]int
	// calls holds the tool_use blocks by seq; calls[:reported] are reported.
	calls    []*toolBlock
	reported int
	// prevEnd is where the current event starts, for error messages.
	prevEnd int64

	// dec and w are reused from event to event to spare allocations.
	dec decoder
	w   wireEvent
}

// event handles one SSE event; done means the message has ended and End has
// been reported.
func (s *stream) event(ev sse.Event) (done bool, err error) {
	start := s.prevEnd
	s.prevEnd = ev.End
	at := func() string { return fmt.Sprintf("at bytes %d-%d", start, ev.End) }

	data := bytes.TrimSpace(ev.Data)
	if s.stopped {
		return s.afterStop(ev, data, at)
	}
	// Blank data carries nothing, and [DONE] is an OpenAI-style terminator
	// some gateways append; neither is an Anthropic event.
	if len(data) == 0 || string(data) == "[DONE]" {
		if ev.Type == "error" {
			return true, s.finish(ev.End, "error event with no data "+at())
		}
		return false, nil
	}
	w := &s.w
	*w = wireEvent{Index: -1}
	decodeErr := s.dec.decodeEvent(data, w)
	if _, malformed := decodeErr.(*jsonwire.SyntaxError); malformed {
		if ev.Type == "error" {
			return true, s.finish(ev.End, fmt.Sprintf("error event %s: %s", at(), clip(data)))
		}
		return true, s.finish(ev.End, fmt.Sprintf("bad event data %s: %s", at(), jsonwire.Describe(decodeErr, "data")))
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

	switch typ {
	case "message_start":
		id := messageID(w.Message)
		switch {
		case !s.started:
			s.started, s.msgID = true, id
		case id != s.msgID:
			return true, s.finish(ev.End, fmt.Sprintf(
				"second message_start %s has id %q, not %q: two messages are spliced into one stream", at(), id, s.msgID))
		}
		// A duplicate of the same message's start is a gateway echo; ignore it.
	case "content_block_start", "content_block_delta", "content_block_stop":
		if w.Index < 0 {
			if decodeErr != nil {
				return true, s.finish(ev.End, fmt.Sprintf("bad %s event %s: %s", typ, at(), jsonwire.Describe(decodeErr, "data")))
			}
			return true, s.finish(ev.End, fmt.Sprintf("%s without index %s", typ, at()))
		}
		return s.block(typ, w, decodeErr, ev.End, at)
	case "message_delta":
		if w.Delta.StopReason != "" {
			s.stopReason = w.Delta.StopReason
		}
	case "message_stop":
		s.stopped = true
	case "error":
		return true, s.finish(ev.End, fmt.Sprintf("error event %s: %s", at(), describeError(w.Error, data)))
	}
	// ping and unknown events carry nothing for us.
	return false, nil
}

// afterStop handles an event after message_stop, whose data is data: blank
// ones, [DONE] and ping carry nothing, anything else fails the stream.
func (s *stream) afterStop(ev sse.Event, data []byte, at func() string) (done bool, err error) {
	switch {
	case ev.Type == "" && (len(data) == 0 || string(data) == "[DONE]"):
		return false, nil
	case ev.Type == "ping" || ev.Type == "" && s.isPing(data):
		return false, nil
	}
	return true, s.finish(ev.End, "stream continues after message_stop: another event "+at())
}

// isPing reports whether data is a ping event's.
func (s *stream) isPing(data []byte) bool {
	s.w = wireEvent{Index: -1}
	return s.dec.decodeEvent(data, &s.w) == nil && s.w.Type == "ping"
}

// block handles the content_block_* event w, which ends at byte end.
//
// decodeErr is a field of an unexpected type, with the rest of w decoded.
// That is harmless in blocks that are not tool calls, so a new kind of block
// cannot break parsing; in a tool_use block it would silently lose part of a
// call, so there it ends the stream.
func (s *stream) block(typ string, w *wireEvent, decodeErr error, end int64, at func() string) (bool, error) {
	seq, known := s.blocks[w.Index]
	isTool := known && seq >= 0
	if typ == "content_block_start" {
		isTool = w.ContentBlock.Type == "tool_use"
	}
	if decodeErr != nil && isTool {
		return true, s.finish(end, fmt.Sprintf("bad %s event %s: %s", typ, at(), jsonwire.Describe(decodeErr, "data")))
	}
	switch typ {
	case "content_block_start":
		if known {
			return true, s.finish(end, fmt.Sprintf("second content_block_start for index %d %s", w.Index, at()))
		}
		cb := &w.ContentBlock
		if !isTool {
			s.blocks[w.Index] = -1
			return false, nil
		}
		b := &toolBlock{seq: len(s.calls), index: w.Index, id: cb.ID, name: cb.Name}
		if isObjectWithMembers(cb.Input) {
			b.startInput = cb.Input
		}
		s.blocks[w.Index] = b.seq
		s.calls = append(s.calls, b)
	case "content_block_delta":
		// Deltas for unknown or finished blocks are out of protocol and carry no call.
		if isTool && !s.calls[seq].done && w.Delta.Type == "input_json_delta" {
			b := s.calls[seq]
			b.raw = append(b.raw, w.Delta.PartialJSON...)
		}
	case "content_block_stop":
		if isTool && !s.calls[seq].done {
			s.calls[seq].finish(s.msgID, end)
			return false, s.flush()
		}
	}
	return false, nil
}

// flush reports the finished calls that no unfinished call precedes.
func (s *stream) flush() error {
	for s.reported < len(s.calls) && s.calls[s.reported].done {
		b := s.calls[s.reported]
		s.reported++
		if err := s.h.Call(s.ctx, b.call); err != nil {
			return fmt.Errorf("anthropic: handler: %w", err)
		}
	}
	return nil
}

// finish ends the message at byte at: it reports every call not reported yet,
// those still open as incomplete, then End with failure as its Err.
func (s *stream) finish(at int64, failure string) error {
	why := incompleteReason(s.stopReason, failure)
	for _, b := range s.calls[s.reported:] {
		if !b.done {
			b.abandon(s.msgID, at, why)
		}
	}
	if err := s.flush(); err != nil {
		return err
	}
	end := modelstream.End{Calls: len(s.calls), StopReason: s.stopReason, Err: failure}
	if err := s.h.End(s.ctx, end); err != nil {
		return fmt.Errorf("anthropic: handler: %w", err)
	}
	return nil
}
