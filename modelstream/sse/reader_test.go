package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// feeders deliver the same input in different read sizes; every one must give
// the same events, offsets included.
var feeders = []struct {
	name string
	wrap func(b []byte) io.Reader
}{
	{"whole", func(b []byte) io.Reader { return bytes.NewReader(b) }},
	{"one-byte", func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
	{"half", func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) }},
	{"data-err", func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) }},
	{"random", func(b []byte) io.Reader { return newChunkReader(b, rand.New(rand.NewPCG(1, uint64(len(b))))) }},
}

// chunkReader returns its data in reads of random size between 1 and 17 bytes.
type chunkReader struct {
	data []byte
	rng  *rand.Rand
}

func newChunkReader(data []byte, rng *rand.Rand) *chunkReader {
	return &chunkReader{data: data, rng: rng}
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(1+c.rng.IntN(17), len(p), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

func ev(typ, data string, end int64) Event {
	e := Event{Type: typ, End: end}
	if data != "\x00nil" {
		e.Data = []byte(data)
	}
	return e
}

const noData = "\x00nil"

func TestReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Event
	}{
		{"empty", "", nil},
		{"blank lines only", "\n\r\n\r\n", nil},
		{"lf", "event: a\ndata: 1\n\n", []Event{ev("a", "1", 18)}},
		{"crlf", "event: a\r\ndata: 1\r\n\r\n", []Event{ev("a", "1", 21)}},
		{"lone cr", "event: a\rdata: 1\r\r", []Event{ev("a", "1", 18)}},
		{"mixed line ends", "data: 1\r\n\ndata: 2\r\r\ndata: 3\n\r", []Event{ev("", "1", 10), ev("", "2", 20), ev("", "3", 29)}},
		{"cr then lf is one line end", "data: 1\r\n\r\ndata: 2\r\n\r\n", []Event{ev("", "1", 11), ev("", "2", 22)}},
		{"data without space", "data:{}\n\n", []Event{ev("", "{}", 9)}},
		{"strip at most one space", "data:  x \n\n", []Event{ev("", " x ", 11)}},
		{"data joined with lf", "data: a\ndata:\ndata: b\n\n", []Event{ev("", "a\n\nb", 23)}},
		{"data line without colon", "data\n\n", []Event{ev("", "", 6)}},
		{"comments ignored", ": keepalive\n\n:x\ndata: x\n: mid\n\n", []Event{ev("", "x", 31)}},
		{"trailing spaces kept", "data: {\"a\":1}   \n\n", []Event{ev("", `{"a":1}   `, 18)}},
		{"unterminated last event", "data: a\n\ndata: b", []Event{ev("", "a", 9), ev("", "b", 16)}},
		{"last event without blank line", "data: a\n", []Event{ev("", "a", 8)}},
		{"event without data", "event: ping\n\n", []Event{ev("ping", noData, 13)}},
		{"event field without colon", "event\ndata: x\n\n", []Event{ev("", "x", 15)}},
		{"last event type wins", "event: a\nevent: b\ndata: x\n\n", []Event{ev("b", "x", 27)}},
		{"unknown fields ignored", "retry: 10\nfoo: bar\ndata: x\n\n", []Event{ev("", "x", 28)}},
		{"unknown fields alone dispatch nothing", "retry: 10\n\ndata: x\n\n", []Event{ev("", "x", 20)}},
		{"bom stripped", "\xEF\xBB\xBFdata: x\n\n", []Event{ev("", "x", 12)}},
		{"bom only at start", "data: x\n\n\xEF\xBB\xBFdata: y\n\n", []Event{ev("", "x", 9)}},
		{"utf8 kept as bytes", "data: h\xC3\xA9 \xF0\x9F\x98\x80\n\n", []Event{ev("", "h\xC3\xA9 \xF0\x9F\x98\x80", 16)}},
		{"invalid utf8 kept", "data: \xff\xfe\n\n", []Event{ev("", "\xff\xfe", 10)}},
		{"nul kept", "data: a\x00b\n\n", []Event{ev("", "a\x00b", 11)}},
		{
			"anthropic shape",
			"event: message_stop\ndata: {\"type\":\"message_stop\" }\n\n",
			[]Event{ev("message_stop", `{"type":"message_stop" }`, 52)},
		},
	}
	for _, tt := range tests {
		for _, f := range feeders {
			t.Run(tt.name+"/"+f.name, func(t *testing.T) {
				got, err := Events(f.wrap([]byte(tt.in)))
				if err != nil {
					t.Fatalf("Events: %v", err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("Events(%q)\n got %s\nwant %s", tt.in, fmtEvents(got), fmtEvents(tt.want))
				}
			})
		}
	}
}

func TestReaderIDs(t *testing.T) {
	in := "id: 1\ndata: a\n\ndata: b\n\nid: 2\x003\ndata: c\n\nid\ndata: d\n\n"
	got, err := Events(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	// The id persists across events, an id holding NUL is ignored and a bare
	// "id" resets it, as WHATWG says.
	want := []string{"1", "1", "1", ""}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("ids = %q, want %q", ids, want)
	}
}

// TestReaderSplitAnywhere feeds each input in two reads cut at every byte, so
// every line end and every multi-byte sequence is split somewhere.
func TestReaderSplitAnywhere(t *testing.T) {
	inputs := []string{
		"event: a\r\ndata: 1\r\n\r\nevent: b\rdata: h\xC3\xA9\r\r: c\r\ndata: \xF0\x9F\x98\x80\n\ndata: end",
		"\xEF\xBB\xBFdata:x\r\rdata:y\r\n\r\n",
	}
	for _, in := range inputs {
		want, err := Events(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k <= len(in); k++ {
			r := io.MultiReader(strings.NewReader(in[:k]), strings.NewReader(in[k:]))
			got, err := Events(r)
			if err != nil {
				t.Fatalf("split at %d: %v", k, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("split at %d:\n got %s\nwant %s", k, fmtEvents(got), fmtEvents(want))
			}
		}
	}
}

func TestReaderLongLine(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 5<<20/16) // 5 MiB, far past bufio's buffer
	in := slices(
		[]byte("event: big\ndata: "), big, []byte("\r\ndata: tail\r\n\r\ndata: next\n\n"),
	)
	want := []Event{
		{Type: "big", Data: slices(big, []byte("\ntail")), End: int64(len(in) - len("data: next\n\n"))},
		{Data: []byte("next"), End: int64(len(in))},
	}
	for _, f := range feeders {
		if f.name == "one-byte" && testing.Short() {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			got, err := Events(f.wrap(in))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d events, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].Type != want[i].Type || !bytes.Equal(got[i].Data, want[i].Data) || got[i].End != want[i].End {
					t.Errorf("event %d: type %q, %d data bytes, end %d; want type %q, %d bytes, end %d",
						i, got[i].Type, len(got[i].Data), got[i].End, want[i].Type, len(want[i].Data), want[i].End)
				}
			}
		})
	}
}

func slices(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// errAfter returns its chunks one read at a time, then err.
type errAfter struct {
	chunks []string
	err    error
}

func (e *errAfter) Read(p []byte) (int, error) {
	if len(e.chunks) == 0 {
		return 0, e.err
	}
	n := copy(p, e.chunks[0])
	e.chunks[0] = e.chunks[0][n:]
	if e.chunks[0] == "" {
		e.chunks = e.chunks[1:]
	}
	return n, nil
}

func TestReaderError(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name   string
		chunks []string
		want   []Event
	}{
		{"partial event dropped", []string{"data: a\n\n", "data: b\n"}, []Event{ev("", "a", 9)}},
		{"error while looking past a final cr", []string{"data: a\r\r"}, []Event{ev("", "a", 9)}},
		{"error while looking past a cr", []string{"data: a\r", "\r"}, []Event{ev("", "a", 9)}},
		{"immediate", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(&errAfter{chunks: tt.chunks, err: errBoom})
			var got []Event
			for {
				e, err := r.Next()
				if err != nil {
					if !errors.Is(err, errBoom) {
						t.Fatalf("Next error = %v, want %v", err, errBoom)
					}
					break
				}
				got = append(got, e)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %s, want %s", fmtEvents(got), fmtEvents(tt.want))
			}
			if _, err := r.Next(); !errors.Is(err, errBoom) {
				t.Errorf("Next after error = %v, want %v again", err, errBoom)
			}
		})
	}
}

func TestReaderEOFSticky(t *testing.T) {
	r := NewReader(strings.NewReader("data: a"))
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := r.Next(); !errors.Is(err, io.EOF) {
			t.Fatalf("Next = %v, want io.EOF", err)
		}
	}
}

// TestReaderDataOwned checks that Data does not alias the reader's buffers.
func TestReaderDataOwned(t *testing.T) {
	r := NewReader(strings.NewReader("data: first\n\ndata: second\n\n"))
	a, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if string(a.Data) != "first" {
		t.Errorf("first event's data changed to %q", a.Data)
	}
}

func fmtEvents(evs []Event) string {
	var b strings.Builder
	b.WriteString("[")
	for i, e := range evs {
		if i > 0 {
			b.WriteString(", ")
		}
		data := "nil"
		if e.Data != nil {
			data = fmt.Sprintf("%q", e.Data)
		}
		fmt.Fprintf(&b, "{type %q data %s id %q end %d}", e.Type, data, e.ID, e.End)
	}
	b.WriteString("]")
	return b.String()
}

func BenchmarkReader(b *testing.B) {
	var in bytes.Buffer
	for i := range 10000 {
		fmt.Fprintf(&in, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"chunk %d\"}}      \n\n", i)
	}
	data := in.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(data))
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
}

func TestReaderOffset(t *testing.T) {
	in := "data: a\n\n: trailing comment\n\n\n"
	r := NewReader(strings.NewReader(in))
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if e.End != 9 || r.Offset() != 9 {
		t.Errorf("after the event: End %d, Offset %d; want 9, 9", e.End, r.Offset())
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("Next = %v, want io.EOF", err)
	}
	if r.Offset() != int64(len(in)) {
		t.Errorf("Offset at EOF = %d, want %d", r.Offset(), len(in))
	}
}
