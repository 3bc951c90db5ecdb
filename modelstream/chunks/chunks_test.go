package chunks

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestFramingAndOffsets(t *testing.T) {
	file := "{\"a\":1}\n\n{\"b\":22}\r\n{\"c\":3}"
	r := NewReader(iotest.OneByteReader(strings.NewReader(file)))
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	want := "data: {\"a\":1}\n\ndata: {\"b\":22}\n\ndata: {\"c\":3}\n\n"
	if string(got) != want {
		t.Fatalf("framed %q, want %q", got, want)
	}
	// Past the second event in the framed stream is past line 3 of the file.
	second := int64(len("data: {\"a\":1}\n\ndata: {\"b\":22}\n\n"))
	if off := r.FileOffset(second); off != int64(len("{\"a\":1}\n\n{\"b\":22}\r\n")) {
		t.Errorf("FileOffset = %d", off)
	}
	if off := r.FileOffset(int64(len(want))); off != int64(len(file)) {
		t.Errorf("last FileOffset = %d, want %d", off, len(file))
	}
}
