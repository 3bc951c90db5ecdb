package sse

import "bytes"

// Split cuts raw SSE bytes into per-event chunks, so a test or replay tool can
// feed a stream with a pause between events.
//
// Each chunk ends just past a blank line that ends an event (a run of lines
// holding at least one non-blank line, comments included); the last chunk may
// be unterminated. CR, LF and CRLF line ends are recognized. The chunks are
// slices of data, and concatenating them gives back data exactly.
func Split(data []byte) [][]byte {
	var (
		chunks     [][]byte
		start      int
		hasContent bool
	)
	for i := 0; i < len(data); {
		end := len(data)
		if j := bytes.IndexAny(data[i:], "\r\n"); j >= 0 {
			end = i + j
		}
		next := end
		if next < len(data) {
			next++
			if data[end] == '\r' && next < len(data) && data[next] == '\n' {
				next++
			}
		}
		switch {
		case end > i:
			hasContent = true
		case hasContent:
			chunks = append(chunks, data[start:next:next])
			start, hasContent = next, false
		}
		i = next
	}
	if start < len(data) {
		chunks = append(chunks, data[start:len(data):len(data)])
	}
	return chunks
}
