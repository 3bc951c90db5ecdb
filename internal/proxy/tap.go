package proxy

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// errOverflow ends the parser's side of a tap whose parser fell too far
// behind the stream.
var errOverflow = errors.New("proxy: tap buffer overflow: the parser fell behind the stream")

// errStream marks the failures of the stream itself (the upstream failed,
// or the caller went away before the upstream ended): the parser reports
// them through End, so the turn ends with the calls seen so far.
var errStream = errors.New("proxy: stream cut")

// errClosedEarly is what the parser reads when the response body was
// closed before the upstream stream ended: the caller went away, or the
// reverse proxy gave up on a failed write.
var errClosedEarly = fmt.Errorf("%w: response closed before the upstream stream ended", errStream)

// tapBuffer is a bounded, non-blocking pipe between the caller's stream and
// the parser: Write never waits (it copies, or gives up for good when the
// parser is more than limit bytes behind), Read waits for data.
type tapBuffer struct {
	mu       sync.Mutex
	cond     sync.Cond
	data     []byte // unread bytes are data[off:]
	off      int
	limit    int
	werr     error // set once the writer is done: io.EOF, a stream error or errOverflow
	rclosed  bool  // the parser is done; writes are dropped
	overflow bool
}

func newTapBuffer(limit int) *tapBuffer {
	b := &tapBuffer{limit: limit}
	b.cond.L = &b.mu
	return b
}

// Write copies p for the parser. It returns false when p is not kept: the
// writer or the reader is done, or p would overflow the buffer, in which
// case the buffered bytes are dropped and the reader gets errOverflow at
// once. first is true for the write that overflowed.
func (b *tapBuffer) Write(p []byte) (kept, first bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.werr != nil || b.rclosed {
		return false, false
	}
	unread := len(b.data) - b.off
	if unread+len(p) > b.limit {
		b.overflow, b.werr = true, errOverflow
		b.data, b.off = nil, 0
		b.cond.Broadcast()
		return false, true
	}
	if b.off > 0 && len(b.data)+len(p) > cap(b.data) {
		n := copy(b.data, b.data[b.off:])
		b.data, b.off = b.data[:n], 0
	}
	b.data = append(b.data, p...)
	b.cond.Broadcast()
	return true, false
}

// CloseWithError ends the writer's side: the reader gets the buffered bytes,
// then err (io.EOF for a clean end). Only the first close counts.
func (b *tapBuffer) CloseWithError(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.werr == nil {
		b.werr = err
	}
	b.cond.Broadcast()
}

// Read implements io.Reader for the parser.
func (b *tapBuffer) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.data) == b.off && b.werr == nil && !b.rclosed {
		b.cond.Wait()
	}
	if b.rclosed {
		return 0, io.ErrClosedPipe
	}
	if len(b.data) > b.off {
		n := copy(p, b.data[b.off:])
		b.off += n
		if b.off == len(b.data) {
			b.data, b.off = b.data[:0], 0
		}
		return n, nil
	}
	return 0, b.werr
}

// CloseRead ends the reader's side: later writes are dropped.
func (b *tapBuffer) CloseRead() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rclosed = true
	b.data, b.off = nil, 0
	b.cond.Broadcast()
}

// Overflowed says whether the parser fell behind and the tap was stopped.
func (b *tapBuffer) Overflowed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.overflow
}

// tapBody replaces an upstream response body: every Read returns exactly
// what the upstream body returned, and a copy of the bytes goes to buf.
type tapBody struct {
	io.ReadCloser
	buf        *tapBuffer
	onOverflow func()
}

func (t *tapBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	if n > 0 {
		if _, first := t.buf.Write(p[:n]); first && t.onOverflow != nil {
			t.onOverflow()
		}
	}
	switch {
	case err == io.EOF:
		t.buf.CloseWithError(io.EOF)
	case err != nil:
		t.buf.CloseWithError(fmt.Errorf("%w: upstream: %w", errStream, err))
	}
	return n, err
}

// Close closes the upstream body; a body closed before its end cuts the
// parser's stream with errClosedEarly.
func (t *tapBody) Close() error {
	err := t.ReadCloser.Close()
	t.buf.CloseWithError(errClosedEarly)
	return err
}
