package sse

import (
	"bytes"
	"reflect"
	"testing"
	"testing/iotest"
)

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"event: a\ndata: 1\n\n",
		"event: a\r\ndata: 1\r\n\r\n",
		"data:x\r\rdata: y\r\n\r\n: c\ndata",
		"\xEF\xBB\xBFid: 1\ndata: a\n\ndata: b",
		"event: message_stop\ndata: {\"type\":\"message_stop\" }",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want, err := Events(bytes.NewReader(in))
		if err != nil {
			t.Fatalf("Events: %v", err)
		}
		var last int64
		for _, e := range want {
			if e.End <= last || e.End > int64(len(in)) {
				t.Fatalf("End %d out of order or past the input (previous %d, len %d)", e.End, last, len(in))
			}
			last = e.End
		}
		got, err := Events(iotest.OneByteReader(bytes.NewReader(in)))
		if err != nil {
			t.Fatalf("Events one byte at a time: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("one byte at a time:\n got %s\nwant %s", fmtEvents(got), fmtEvents(want))
		}

		chunks := Split(in)
		if !bytes.Equal(bytes.Join(chunks, nil), in) {
			t.Fatalf("Split chunks do not join back to the input")
		}
		// Every event ends at a chunk boundary.
		bounds := map[int64]bool{}
		var off int64
		for _, c := range chunks {
			off += int64(len(c))
			bounds[off] = true
		}
		for _, e := range want {
			if !bounds[e.End] {
				t.Fatalf("event ending at %d is not at a Split boundary", e.End)
			}
		}
	})
}
