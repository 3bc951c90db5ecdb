// Package chunks reads `.chunks.jsonl` captures — one SSE data payload per
// line, without the `data:` framing — as the SSE stream they stand for, and
// maps byte offsets in that stream back to the file.
package chunks

import (
	"bufio"
	"bytes"
	"io"
	"sort"
)

// Reader frames each line of a chunks file as `data: <line>\n\n`.
type Reader struct {
	src *bufio.Reader
	buf bytes.Buffer
	err error
	// ends[i] is the framed stream's offset just past line i's event;
	// fileEnds[i] the file's offset just past line i.
	ends, fileEnds []int64
	framed, file   int64
}

// NewReader wraps a chunks file.
func NewReader(r io.Reader) *Reader { return &Reader{src: bufio.NewReaderSize(r, 64<<10)} }

// Read implements io.Reader over the framed stream.
func (r *Reader) Read(p []byte) (int, error) {
	for r.buf.Len() == 0 && r.err == nil {
		line, err := r.src.ReadBytes('\n')
		r.file += int64(len(line))
		if trimmed := bytes.TrimRight(line, "\r\n"); len(bytes.TrimSpace(trimmed)) > 0 {
			r.buf.WriteString("data: ")
			r.buf.Write(trimmed)
			r.buf.WriteString("\n\n")
			r.framed += int64(len(trimmed)) + 8
			r.ends = append(r.ends, r.framed)
			r.fileEnds = append(r.fileEnds, r.file)
		}
		r.err = err
	}
	if r.buf.Len() > 0 {
		return r.buf.Read(p)
	}
	return 0, r.err
}

// FileOffset maps an offset in the framed stream (just past an event) to
// the offset just past the file line that event came from.
func (r *Reader) FileOffset(framed int64) int64 {
	i := sort.Search(len(r.ends), func(i int) bool { return r.ends[i] >= framed })
	if i == len(r.ends) {
		return r.file
	}
	return r.fileEnds[i]
}
