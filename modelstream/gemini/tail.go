package gemini

import (
	"bytes"
	"errors"
	"io"
)

// lineWatch passes reads through to the SSE reader and notes the lines that
// are not SSE: non-blank lines that are not comments and whose field name is
// not data, event, id or retry. The SSE reader ignores such lines, as it
// must; but a Google error body written raw after the last event (a gateway
// that failed after HTTP 200) is such lines, and losing it would make a
// failed stream look finished. lineWatch keeps the foreign lines that follow
// the last SSE field line: at EOF they are the stream's non-SSE tail.
//
// Lines end at CR or LF, as in the SSE reader; the empty line between the CR
// and LF of a CRLF is blank and so of no account.
type lineWatch struct {
	r   io.Reader
	off int64

	state     lineState
	lineStart int64
	name      [maxName]byte
	nameLen   int
	eof       bool

	// tailStart is the offset of the first foreign line after the last SSE
	// field line, -1 when there is none.
	tailStart int64
	// tail holds those lines, joined with '\n', up to maxTail bytes;
	// clipped says bytes were left out.
	tail    []byte
	clipped bool
}

type lineState uint8

const (
	lineStart   lineState = iota // at the start of a line
	lineName                     // reading the field name
	lineKnown                    // an SSE line: skip to its end
	lineForeign                  // a foreign line: keep its text
)

const (
	// maxName is the longest name that can still be an SSE field: "retry"
	// after a byte order mark.
	maxName = 8
	// maxTail bounds the foreign text kept.
	maxTail = 4 << 10
)

func newLineWatch(r io.Reader) *lineWatch {
	return &lineWatch{r: r, tailStart: -1}
}

func (w *lineWatch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	w.scan(p[:n])
	if errors.Is(err, io.EOF) && !w.eof {
		w.eof = true
		w.endLine()
	}
	return n, err
}

func (w *lineWatch) scan(p []byte) {
	for i := 0; i < len(p); {
		switch w.state {
		case lineStart, lineName:
			c := p[i]
			if c == '\r' || c == '\n' {
				w.endLine()
				i++
				w.off++
				continue
			}
			if w.state == lineStart {
				w.state, w.lineStart, w.nameLen = lineName, w.off, 0
			}
			i++
			w.off++
			if c == ':' {
				w.decide(true)
				continue
			}
			if w.nameLen == maxName {
				w.foreign(false)
				w.keep([]byte{c})
				continue
			}
			w.name[w.nameLen] = c
			w.nameLen++
		default:
			rest := p[i:]
			end := bytes.IndexByte(rest, '\n')
			if end < 0 {
				end = len(rest)
			}
			if cr := bytes.IndexByte(rest[:end], '\r'); cr >= 0 {
				end = cr
			}
			if w.state == lineForeign {
				w.keep(rest[:end])
			}
			i += end
			w.off += int64(end)
			if i < len(p) {
				w.endLine()
				i++
				w.off++
			}
		}
	}
}

// endLine ends the current line at a line break or at EOF.
func (w *lineWatch) endLine() {
	if w.state == lineName {
		w.decide(false)
	}
	w.state = lineStart
}

// decide classifies the line by its name, read up to a colon (colon) or
// to the end of the line.
func (w *lineWatch) decide(colon bool) {
	name := w.name[:w.nameLen]
	if w.lineStart == 0 {
		name = bytes.TrimPrefix(name, []byte("\xEF\xBB\xBF"))
	}
	switch string(name) {
	case "":
		// A comment, or a blank line after a byte order mark.
		w.state = lineKnown
	case "data", "event", "id", "retry":
		w.state = lineKnown
		w.tailStart, w.tail, w.clipped = -1, w.tail[:0], false
	default:
		w.foreign(colon)
	}
}

// foreign starts keeping the current line, beginning with the name read so far.
func (w *lineWatch) foreign(colon bool) {
	w.state = lineForeign
	if w.tailStart < 0 {
		w.tailStart = w.lineStart
	} else {
		w.keep([]byte{'\n'})
	}
	w.keep(w.name[:w.nameLen])
	if colon {
		w.keep([]byte{':'})
	}
}

func (w *lineWatch) keep(b []byte) {
	room := maxTail - len(w.tail)
	if len(b) > room {
		b, w.clipped = b[:room], true
	}
	w.tail = append(w.tail, b...)
}
