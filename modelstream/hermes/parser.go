// Package hermes reads tool calls in the Hermes / Qwen text format out of a
// model's raw output text, as it streams, and reports them through the
// modelstream contract.
//
// The input is the generated text itself, not SSE: the caller feeds the
// content deltas of whatever transport carried them, with special tokens
// kept (vLLM's skip_special_tokens=False). Text outside the tags is content
// and is ignored. Each <tool_call> ... </tool_call> block is one call: the
// whole block is parsed at </tool_call> as one JSON object with "name" and
// "arguments" in either order (Hermes 2 Pro puts arguments first), so
// nothing waits for the name; arguments may be a JSON string holding the
// object (Granite), a ```json fence around the object is stripped (see
// parseBlock). A block that is not such an object is reported at once as
// not runnable, with the reason.
//
// A <tool_call> inside <think>...</think> is reasoning, not a call. The
// turn ends at <|im_end|> (stop reason "im_end"; nothing after it is read)
// or at EOF (stop reason "eos"). A block still open then is reported as an
// incomplete call: vLLM would run it, but a block cut off by max_tokens
// looks just the same.
//
// The scanner holds back only the bytes that may begin a tag, so however
// the text is cut into reads, byte by byte included, the results and their
// offsets are the same. There are no ids on the wire; each call gets
// call_hermes_<seq>_<hash>, where the hash covers the whole text up to the
// end of the block, so the same text gives the same ids.
package hermes

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/toolwire/toolwire/modelstream"
)

// Parser parses Hermes-format model text; the zero value is ready to use,
// and as it keeps no state between Parse calls it is safe for concurrent use.
type Parser struct{}

var _ modelstream.Parser = (*Parser)(nil)

// New returns a Parser.
func New() *Parser { return &Parser{} }

// readSize is the size of the reads from the input.
const readSize = 32 << 10

// The tags the scanner looks for; none holds a '<' past its first byte,
// which keeps the matching simple (see feed).
const (
	tagCall      = "<tool_call>"
	tagCallEnd   = "</tool_call>"
	tagThink     = "<think>"
	tagThinkEnd  = "</think>"
	tagTurnEnd   = "<|im_end|>"
	notClosedErr = "tool call not closed before the end of the text"
)

// state is where the scanner is in the text.
type state uint8

const (
	inText  state = iota // content, between blocks
	inThink              // inside <think>...</think>
	inCall               // inside <tool_call>...</tool_call>
)

// tags lists the tags that mean something in each state.
var tags = [...][]string{
	inText:  {tagCall, tagThink, tagTurnEnd},
	inThink: {tagThinkEnd, tagTurnEnd},
	inCall:  {tagCallEnd, tagTurnEnd},
}

// Parse reads model text from r and reports its tool calls and its end to
// h, as modelstream.Parser describes.
//
// Parse checks ctx between reads and before each call it reports; a read
// blocked on r is interrupted only by closing r.
func (p *Parser) Parse(ctx context.Context, r io.Reader, h modelstream.Handler) error {
	s := &scanner{ctx: ctx, h: h, sum: sha256.New()}
	buf := make([]byte, readSize)
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("hermes: %w", err)
		}
		n, err := r.Read(buf)
		if n > 0 {
			if done, ferr := s.feed(buf[:n]); done || ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return s.end("eos", "")
		}
		if err != nil {
			// The handler still hears that the text ended, and how.
			endErr := s.end("", fmt.Sprintf("read error after byte %d: %v", s.off, err))
			return errors.Join(fmt.Errorf("hermes: read text: %w", err), endErr)
		}
	}
}

// scanner is the state of one Parse.
type scanner struct {
	ctx context.Context
	h   modelstream.Handler

	state state
	// pend holds the bytes read since a '<' that may still begin a tag.
	pend []byte
	// body is the text of the open block.
	body []byte
	// off counts the bytes fed.
	off int64
	// sum hashes every byte fed, for the ids.
	sum   hash.Hash
	calls int
}

// feed scans the next bytes of the text; done means End has been reported.
func (s *scanner) feed(p []byte) (done bool, err error) {
	// p[:hashed] has been written to s.sum.
	hashed := 0
	defer func() { s.sum.Write(p[hashed:]) }()
	for i := 0; i < len(p); {
		if len(s.pend) == 0 {
			// Outside a possible tag: skip to the next '<'.
			j := bytes.IndexByte(p[i:], '<')
			if j < 0 {
				j = len(p) - i
			}
			s.text(p[i : i+j])
			i += j
			s.off += int64(j)
			if i == len(p) {
				break
			}
		}
		c := p[i]
		i++
		s.off++
		s.pend = append(s.pend, c)
		tag, prefix := s.match()
		switch {
		case tag != "":
			s.pend = s.pend[:0]
			s.sum.Write(p[hashed:i])
			hashed = i
			if done, err := s.tag(tag); done || err != nil {
				return done, err
			}
		case prefix:
			// Wait for more bytes.
		case c == '<':
			// No tag holds a '<' past its start, so the new one may begin one.
			s.text(s.pend[:len(s.pend)-1])
			s.pend = append(s.pend[:0], '<')
		default:
			s.text(s.pend)
			s.pend = s.pend[:0]
		}
	}
	return false, nil
}

// match reports whether pend is one of the current state's tags, or a
// prefix of one.
func (s *scanner) match() (tag string, prefix bool) {
	for _, t := range tags[s.state] {
		if len(s.pend) <= len(t) && t[:len(s.pend)] == string(s.pend) {
			if len(s.pend) == len(t) {
				return t, false
			}
			prefix = true
		}
	}
	return "", prefix
}

// text takes bytes that are not part of a tag.
func (s *scanner) text(b []byte) {
	if s.state == inCall {
		s.body = append(s.body, b...)
	}
}

// tag acts on a complete tag, which ends at s.off.
func (s *scanner) tag(t string) (done bool, err error) {
	switch t {
	case tagCall:
		s.state, s.body = inCall, s.body[:0]
	case tagThink:
		s.state = inThink
	case tagThinkEnd:
		s.state = inText
	case tagCallEnd:
		s.state = inText
		return false, s.report(s.closed())
	case tagTurnEnd:
		return true, s.end("im_end", "")
	}
	return false, nil
}

// closed builds the call of the block that </tool_call> just closed.
func (s *scanner) closed() modelstream.Call {
	c := s.base()
	name, input, err := parseBlock(s.body)
	c.Name = name
	if err != nil {
		c.Err = err.Error()
	} else {
		c.Input, c.Complete = input, true
	}
	return c
}

// base is a call for the current block, without its verdict.
func (s *scanner) base() modelstream.Call {
	var sum [sha256.Size]byte
	h := s.sum.Sum(sum[:0])
	return modelstream.Call{
		Seq:      s.calls,
		ID:       fmt.Sprintf("call_hermes_%d_%s", s.calls, hex.EncodeToString(h[:8])),
		RawInput: string(s.body),
		At:       s.off,
	}
}

// report hands one call to the handler.
func (s *scanner) report(c modelstream.Call) error {
	if err := s.ctx.Err(); err != nil {
		return fmt.Errorf("hermes: %w", err)
	}
	s.calls++
	if err := s.h.Call(s.ctx, c); err != nil {
		return fmt.Errorf("hermes: handler: %w", err)
	}
	return nil
}

// end reports the end of the text at s.off: a block still open as an
// incomplete call, then End. The bytes held back as a possible tag are text.
func (s *scanner) end(stopReason, failure string) error {
	s.text(s.pend)
	s.pend = s.pend[:0]
	if s.state == inCall {
		s.state = inText
		c := s.base()
		// Name the call when the block so far is a whole one, perhaps cut
		// inside its </tool_call>, to help the reader.
		if name, _, err := parseBlock(trimPartialTag(s.body, tagCallEnd)); err == nil {
			c.Name = name
		}
		c.Err = notClosedErr
		if failure != "" {
			c.Err += " (" + failure + ")"
		}
		if err := s.report(c); err != nil {
			return err
		}
	}
	end := modelstream.End{Calls: s.calls, StopReason: stopReason, Err: failure}
	if err := s.h.End(s.ctx, end); err != nil {
		return fmt.Errorf("hermes: handler: %w", err)
	}
	return nil
}

// trimPartialTag removes from the end of b the longest proper prefix of tag.
func trimPartialTag(b []byte, tag string) []byte {
	for n := min(len(b), len(tag)-1); n > 0; n-- {
		if string(b[len(b)-n:]) == tag[:n] {
			return b[:len(b)-n]
		}
	}
	return b
}
