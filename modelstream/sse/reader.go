// Package sse reads Server-Sent Events as model APIs send them.
//
// It follows the WHATWG event-stream rules with the leniencies real model
// streams need: CR, LF and CRLF line ends (lone CR too), "data:" with or
// without a space, an unterminated last event at EOF (real captures end that
// way), lines of any length, and bytes kept as bytes so UTF-8 split across
// reads is never mangled. Every event carries the byte offset just past it,
// so callers can say exactly where in a stream something happened.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Event is one dispatched server-sent event.
type Event struct {
	// Type is the value of the last "event:" field, "" when there was none.
	Type string
	// Data is the "data:" field values joined with "\n"; nil when the event had no data field.
	Data []byte
	// ID is the last event ID: the most recent "id:" field of this or an earlier event.
	ID string
	// End is the byte offset in the input just past the event's terminating blank line,
	// or the input length for an unterminated last event.
	End int64
}

const (
	// bufSize is the read buffer; longer lines are assembled in Reader.line.
	bufSize = 16 << 10
	// maxTypes bounds the per-reader table of interned event types.
	maxTypes = 64
)

// Reader reads events from a byte stream.
//
// Lines and events have no size cap, because real ones reach megabytes;
// bound the input itself (http.MaxBytesReader) to bound memory.
type Reader struct {
	br *bufio.Reader
	// off counts the bytes consumed, including pending.
	off int64
	// pending is the number of bytes off already counts but not yet
	// discarded from br: the last line is returned as a slice of br's buffer,
	// which stays valid only until the next read from br.
	pending int
	// err is returned by every later Next once the stream has ended or failed.
	err error
	// lateErr is a read error seen while deciding whether a CR is followed by
	// LF; it is reported by the next read rather than dropped.
	lateErr error
	// started is set by the first line; only that line may begin with a BOM.
	started bool

	line  []byte            // assembles lines longer than br's buffer
	data  []byte            // the current event's data lines, each followed by '\n'
	id    string            // the last event ID
	types map[string]string // interned event types
}

// NewReader returns a Reader reading from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, bufSize)}
}

// Next returns the next event, or io.EOF after the last one.
//
// An event is dispatched when a blank line ends it or, for the last event,
// at EOF. Unlike WHATWG, an event with an "event:" field but no data is still
// dispatched, so that a bare "event: error" is not lost. Any error other than
// io.EOF comes from the underlying reader; the partial event is dropped. After
// an error Next keeps returning it.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	r.data = r.data[:0]
	var (
		typ              string
		hasData, hasType bool
	)
	for {
		line, err := r.readLine()
		if err != nil && !errors.Is(err, io.EOF) {
			r.err = err
			return Event{}, err
		}
		if len(line) == 0 && err == nil {
			if hasData || hasType {
				return r.event(typ, hasData), nil
			}
			continue
		}
		if len(line) > 0 && line[0] != ':' {
			name, value := line, []byte(nil)
			if i := bytes.IndexByte(line, ':'); i >= 0 {
				name, value = line[:i], line[i+1:]
				if len(value) > 0 && value[0] == ' ' {
					value = value[1:]
				}
			}
			switch string(name) {
			case "data":
				r.data = append(r.data, value...)
				r.data = append(r.data, '\n')
				hasData = true
			case "event":
				typ = r.intern(value)
				hasType = true
			case "id":
				// WHATWG ignores ids holding NUL: they cannot be sent back in a header.
				if bytes.IndexByte(value, 0) < 0 {
					r.id = string(value)
				}
			}
		}
		if err != nil { // io.EOF: the input ended, possibly without a blank line.
			r.err = io.EOF
			if hasData || hasType {
				return r.event(typ, hasData), nil
			}
			return Event{}, io.EOF
		}
	}
}

// Offset returns the number of input bytes consumed so far: the input length
// once Next has returned io.EOF.
func (r *Reader) Offset() int64 { return r.off }

// event builds the current event; its Data is a fresh copy the caller owns.
func (r *Reader) event(typ string, hasData bool) Event {
	ev := Event{Type: typ, ID: r.id, End: r.off}
	if hasData {
		ev.Data = bytes.Clone(r.data[:len(r.data)-1])
	}
	return ev
}

// intern returns b as a string, reusing earlier strings so that the handful
// of event types a stream repeats do not cost an allocation per event.
func (r *Reader) intern(b []byte) string {
	if s, ok := r.types[string(b)]; ok {
		return s
	}
	s := string(b)
	if r.types == nil {
		r.types = make(map[string]string)
	}
	if len(r.types) < maxTypes {
		r.types[s] = s
	}
	return s
}

// readLine returns the next line without its terminator; it is valid until
// the next call. At EOF it returns the unterminated last line, if any, with
// io.EOF. A leading UTF-8 byte order mark is dropped, as WHATWG requires.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.rawLine()
	if !r.started && (len(line) > 0 || err == nil) {
		r.started = true
		line = bytes.TrimPrefix(line, []byte("\xEF\xBB\xBF"))
	}
	return line, err
}

func (r *Reader) rawLine() ([]byte, error) {
	if r.pending > 0 {
		// Cannot fail: the bytes are buffered.
		_, _ = r.br.Discard(r.pending)
		r.pending = 0
	}
	r.line = r.line[:0]
	for {
		buf, err := r.buffered()
		if len(buf) == 0 {
			return r.line, err
		}
		lf := bytes.IndexByte(buf, '\n')
		seg := buf
		if lf >= 0 {
			seg = buf[:lf]
		}
		if cr := bytes.IndexByte(seg, '\r'); cr >= 0 {
			return r.crLine(buf, cr)
		}
		if lf >= 0 {
			return r.take(buf, lf, lf+1), nil
		}
		r.line = append(r.line, buf...)
		r.consume(len(buf))
	}
}

// crLine ends a line at the CR at buf[cr], swallowing a following LF.
func (r *Reader) crLine(buf []byte, cr int) ([]byte, error) {
	if cr+1 < len(buf) {
		n := cr + 1
		if buf[cr+1] == '\n' {
			n++
		}
		return r.take(buf, cr, n), nil
	}
	// The CR is the last buffered byte. Wait for the next one to tell CRLF from a
	// lone CR, so that offsets never depend on how the input was chunked. Only
	// lone-CR streams pay for this, with latency; CRLF writes rarely split.
	r.line = append(r.line, buf[:cr]...)
	r.consume(cr + 1)
	next, err := r.br.Peek(1)
	if len(next) == 1 && next[0] == '\n' {
		r.consume(1)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		r.lateErr = err
	}
	return r.line, nil
}

// take returns the line buf[:end] and marks n bytes as consumed.
func (r *Reader) take(buf []byte, end, n int) []byte {
	r.off += int64(n)
	if len(r.line) == 0 {
		r.pending = n // Return buf itself; discard it on the next call.
		return buf[:end]
	}
	r.line = append(r.line, buf[:end]...)
	_, _ = r.br.Discard(n)
	return r.line
}

func (r *Reader) consume(n int) {
	r.off += int64(n)
	_, _ = r.br.Discard(n)
}

// buffered returns the buffered bytes, reading more when there are none.
func (r *Reader) buffered() ([]byte, error) {
	if r.lateErr != nil {
		err := r.lateErr
		r.lateErr = nil
		return nil, err
	}
	if r.br.Buffered() == 0 {
		if _, err := r.br.Peek(1); err != nil {
			return nil, err
		}
	}
	return r.br.Peek(r.br.Buffered())
}

// Events reads all events from r.
func Events(r io.Reader) ([]Event, error) {
	sr := NewReader(r)
	var evs []Event
	for {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}
