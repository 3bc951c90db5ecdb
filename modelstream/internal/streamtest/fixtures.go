package streamtest

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/sse"
)

// EachFixture runs f as a subtest for each fixture, named by file(fx), with
// the fixture's bytes from dir (see LoadFixture).
func EachFixture[F any](t *testing.T, dir string, fixtures []F, file func(F) string, f func(t *testing.T, fx F, data []byte)) {
	t.Helper()
	for _, fx := range fixtures {
		t.Run(file(fx), func(t *testing.T) {
			f(t, fx, LoadFixture(t, dir, file(fx)))
		})
	}
}

// CheckFixturesListed makes sure every file in dir matching pattern is one
// of fixtures, so has expectations; finding none fails.
func CheckFixturesListed[F any](t *testing.T, dir, pattern string, fixtures []F, file func(F) string) {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(names) == 0 {
		t.Fatalf("no %s fixtures in %s", pattern, dir)
	}
	listed := map[string]bool{}
	for _, fx := range fixtures {
		listed[file(fx)] = true
	}
	for _, n := range names {
		if !listed[filepath.Base(n)] {
			t.Errorf("fixture %s has no expectations in TestFixtures", filepath.Base(n))
		}
	}
}

// CheckRechunked parses data whole, then fed in every way Rechunk cuts it
// with f: every result must equal the first. It returns the check, for a
// format's further feeds.
func CheckRechunked(t *testing.T, parse func(testing.TB, io.Reader) *Result, data []byte, f Feeds) func(how string, r io.Reader) {
	t.Helper()
	want := parse(t, bytes.NewReader(data))
	check := func(how string, r io.Reader) {
		t.Helper()
		if got := parse(t, r); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", how, got, want)
		}
	}
	Rechunk(data, f, check)
	return check
}

// Tail is the last 60 bytes of b, to show where an offset falls.
func Tail(b []byte) string {
	const n = 60
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// CheckPaced writes data to p through a pipe one SSE event at a time. After
// each event for which completes is true a call must be reported before
// anything more is written, with At just past that event: the parser must
// not wait for more input. It returns the calls so reported, and the
// channel any later call arrives on.
func CheckPaced(t *testing.T, p modelstream.Parser, data []byte, completes func(event []byte) bool) ([]modelstream.Call, <-chan modelstream.Call) {
	t.Helper()
	pr, pw := io.Pipe()
	calls := make(chan modelstream.Call, 16)
	h := modelstream.HandlerFuncs{
		OnCall: func(_ context.Context, c modelstream.Call) error { calls <- c; return nil },
	}
	done := make(chan error, 1)
	go func() { done <- p.Parse(context.Background(), pr, h) }()

	var off int64
	var got []modelstream.Call
	for _, chunk := range sse.Split(data) {
		if _, err := pw.Write(chunk); err != nil {
			t.Fatal(err)
		}
		off += int64(len(chunk))
		if !completes(chunk) {
			continue
		}
		select {
		case c := <-calls:
			got = append(got, c)
			if c.At != off {
				t.Errorf("call %d At = %d, want %d", c.Seq, c.At, off)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no call reported after the event ending at byte %d", off)
		}
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return got, calls
}

// EventEnd finds, independently of the parser, the byte offset just past
// the SSE event holding marker, which must be in data once: its blank line,
// or the end of the data.
func EventEnd(t testing.TB, data []byte, marker string) int64 {
	t.Helper()
	i := bytes.Index(data, []byte(marker))
	if i < 0 {
		t.Fatalf("marker %q not in the fixture", marker)
	}
	if bytes.Count(data, []byte(marker)) != 1 {
		t.Fatalf("marker %q is not unique in the fixture", marker)
	}
	blank := bytes.Index(data[i:], []byte("\n\n"))
	if blank < 0 {
		return int64(len(data))
	}
	return int64(i + blank + 2)
}

// MarkedCall is a complete call expected of a fixture. EndMarker is a byte
// string inside the event that completes it; the expected At is found from
// it (see EventEnd), independently of the parser.
type MarkedCall struct {
	ID, Name, Input, Raw string
	EndMarker            string
}

// CheckMarkedCalls checks that res, parsed from data, holds just the calls
// want, each complete and with At just past the event holding its marker.
func CheckMarkedCalls(t *testing.T, data []byte, res *Result, want []MarkedCall) {
	t.Helper()
	if len(res.Calls) != len(want) {
		t.Fatalf("got %d calls, want %d: %+v", len(res.Calls), len(want), res.Calls)
	}
	for i, w := range want {
		c := res.Calls[i]
		if c.ID != w.ID || c.Name != w.Name || c.RawInput != w.Raw || !c.Complete || string(c.Input) != w.Input {
			t.Errorf("call %d = {ID %q Name %q RawInput %q Complete %v Input %s Err %q}, want {%q %q %q true %s}",
				i, c.ID, c.Name, c.RawInput, c.Complete, c.Input, c.Err, w.ID, w.Name, w.Raw, w.Input)
		}
		if wantAt := EventEnd(t, data, w.EndMarker); c.At != wantAt {
			t.Errorf("call %d At = %d, want %d (just past %q)", i, c.At, wantAt, Tail(data[:wantAt]))
		}
	}
}
