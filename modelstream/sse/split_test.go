package sse

import (
	"bytes"
	"reflect"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"one event", "data: a\n\n", []string{"data: a\n\n"}},
		{"two events", "event: x\ndata: a\n\ndata: b\n\n", []string{"event: x\ndata: a\n\n", "data: b\n\n"}},
		{"unterminated last", "data: a\n\ndata: b", []string{"data: a\n\n", "data: b"}},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"data: a\r\n\r\n", "data: b\r\n\r\n"}},
		{"lone cr", "data: a\r\rdata: b\r\r", []string{"data: a\r\r", "data: b\r\r"}},
		{"extra blank lines go with the next event", "data: a\n\n\n\ndata: b\n\n", []string{"data: a\n\n", "\n\ndata: b\n\n"}},
		{"trailing blank lines", "data: a\n\n\n", []string{"data: a\n\n", "\n"}},
		{"comment block is a chunk", ": ping\n\ndata: a\n\n", []string{": ping\n\n", "data: a\n\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range Split([]byte(tt.in)) {
				got = append(got, string(c))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Split(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestSplitChunksAreEvents checks that every event of the whole input ends
// exactly at a chunk boundary, so feeding chunks paces the stream by event.
func TestSplitChunksAreEvents(t *testing.T) {
	in := []byte("event: a\r\ndata: 1\r\n\r\n: c\n\nevent: b\rdata: 2\r\r\n\ndata: 3")
	evs, err := Events(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var ends []int64
	var off int64
	for _, c := range Split(in) {
		off += int64(len(c))
		ends = append(ends, off)
	}
	var evEnds []int64
	for _, e := range evs {
		evEnds = append(evEnds, e.End)
	}
	// The comment-only chunk ending at 26 holds no event.
	if want := []int64{21, 26, 45, 53}; !reflect.DeepEqual(ends, want) {
		t.Errorf("chunk ends %v, want %v", ends, want)
	}
	if want := []int64{21, 45, 53}; !reflect.DeepEqual(evEnds, want) {
		t.Errorf("event ends %v, want %v", evEnds, want)
	}
}
