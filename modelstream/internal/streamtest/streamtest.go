// Package streamtest holds the test helpers the stream parsers of
// modelstream share: loading the shared fixtures, recording what a Handler
// hears and checking the contract every stream keeps, framing synthetic SSE
// events, and feeding a stream in every cut and read size. It is imported by
// tests only.
package streamtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/toolwire/toolwire/modelstream"
)

// LoadFixture returns the bytes of the fixture name in dir; a missing
// fixture fails the test, since the fixtures are part of the repository. It frames .chunks.jsonl lines as
// "data: <line>\n\n" the way their source's test harness does; other files
// are used as they are.
func LoadFixture(t testing.TB, dir, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(name, ".chunks.jsonl") {
		return raw
	}
	var b bytes.Buffer
	for line := range strings.Lines(string(raw)) {
		if line = strings.TrimRight(line, "\r\n"); line != "" {
			fmt.Fprintf(&b, "data: %s\n\n", line)
		}
	}
	return b.Bytes()
}

// Result is everything a Handler heard from one Parse.
type Result struct {
	Calls []modelstream.Call
	Ends  []modelstream.End
	// Order lists the reports as they came: "call <seq>" or "end".
	Order []string
}

func (r *Result) Call(_ context.Context, c modelstream.Call) error {
	r.Calls = append(r.Calls, c)
	r.Order = append(r.Order, fmt.Sprintf("call %d", c.Seq))
	return nil
}

func (r *Result) End(_ context.Context, e modelstream.End) error {
	r.Ends = append(r.Ends, e)
	r.Order = append(r.Order, "end")
	return nil
}

// Contract selects the checks of CheckContract a format keeps beyond the
// ones every stream keeps.
type Contract struct {
	// Named: a complete call has a name.
	Named bool
	// OneOpen: one call is open at a time, so calls are reported in the
	// order of their At.
	OneOpen bool
}

// Parse runs p over r into a Result and checks the contract every stream
// must keep: no error, End exactly once and last, calls in Seq order,
// End.Calls counting them, and Complete exactly when there is an Input and
// no Err; c adds the format's own checks.
func Parse(t testing.TB, p modelstream.Parser, r io.Reader, c Contract) *Result {
	t.Helper()
	var res Result
	if err := p.Parse(context.Background(), r, &res); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	CheckContract(t, &res, c)
	return &res
}

// CheckContract checks res as Parse does.
func CheckContract(t testing.TB, res *Result, contract Contract) {
	t.Helper()
	if len(res.Ends) != 1 {
		t.Fatalf("End reported %d times, want once (order %v)", len(res.Ends), res.Order)
	}
	if res.Order[len(res.Order)-1] != "end" {
		t.Fatalf("End is not the last report: %v", res.Order)
	}
	var last int64
	for i, c := range res.Calls {
		if c.Seq != i {
			t.Fatalf("call %d has Seq %d: calls out of order", i, c.Seq)
		}
		if c.Complete != (c.Input != nil) || c.Complete != (c.Err == "") {
			t.Fatalf("call %d: Complete %v with Input %q and Err %q", i, c.Complete, c.Input, c.Err)
		}
		if contract.Named && c.Complete && c.Name == "" {
			t.Fatalf("call %d is complete without a name", i)
		}
		if c.ID == "" {
			t.Fatalf("call %d has no ID", i)
		}
		if contract.OneOpen {
			if c.At < last {
				t.Fatalf("call %d At %d is before the previous call's %d: one call is open at a time", i, c.At, last)
			}
			last = c.At
		}
	}
	if res.Ends[0].Calls != len(res.Calls) {
		t.Fatalf("End.Calls = %d, but %d calls were reported", res.Ends[0].Calls, len(res.Calls))
	}
}

// Frame builds an SSE stream from events and returns it with the offset just
// past each event. A bare payload gets "data: ...\n\n"; anything starting
// with "event:", "data:" or ":" is used as is, and so is anything after a
// "raw:" prefix.
func Frame(events []string) ([]byte, []int64) {
	var b bytes.Buffer
	ends := make([]int64, len(events))
	for i, e := range events {
		switch {
		case strings.HasPrefix(e, "raw:"):
			b.WriteString(e[len("raw:"):])
		case strings.HasPrefix(e, "event:"), strings.HasPrefix(e, "data:"), strings.HasPrefix(e, ":"):
			b.WriteString(e)
		default:
			fmt.Fprintf(&b, "data: %s\n\n", e)
		}
		ends[i] = int64(b.Len())
	}
	return b.Bytes(), ends
}

// Feeds says how Rechunk cuts a stream.
type Feeds struct {
	// Step is the distance between the cuts in two; 0 is 1, every byte.
	Step int
	// Seed seeds the random read sizes, with the fixed first half 7.
	Seed uint64
	// Rounds is the number of random-size feeds; MaxRead bounds their reads.
	Rounds, MaxRead int
}

// Rechunk hands check data fed in every way a reader may deliver it: cut in
// two at every Step-th byte, one byte at a time, in half reads, with EOF on
// the last data, and in random sizes. Whatever the feed, a parser's results
// must not change.
func Rechunk(data []byte, f Feeds, check func(how string, r io.Reader)) {
	for k := 0; k <= len(data); k += max(f.Step, 1) {
		check(fmt.Sprintf("cut at byte %d", k),
			io.MultiReader(bytes.NewReader(data[:k]), bytes.NewReader(data[k:])))
	}
	check("one byte at a time", iotest.OneByteReader(bytes.NewReader(data)))
	check("half reads", iotest.HalfReader(bytes.NewReader(data)))
	check("data with EOF", iotest.DataErrReader(bytes.NewReader(data)))
	rng := rand.New(rand.NewPCG(7, f.Seed))
	for i := range f.Rounds {
		check(fmt.Sprintf("random sizes, round %d", i), &RandomReader{Data: data, Rng: rng, Max: f.MaxRead})
	}
}

// RandomReader returns its Data in reads of 1 to Max bytes.
type RandomReader struct {
	Data []byte
	Rng  *rand.Rand
	Max  int
}

func (r *RandomReader) Read(p []byte) (int, error) {
	if len(r.Data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+r.Rng.IntN(r.Max))], r.Data)
	r.Data = r.Data[n:]
	return n, nil
}

// CheckHandlerErrorStops parses data, a stream with at least two calls, with
// a Handler that fails in its first Call, then with one that fails in End:
// Parse must stop at once and return the Handler's error.
func CheckHandlerErrorStops(t *testing.T, p modelstream.Parser, data []byte) {
	t.Helper()
	errStop := errors.New("stop here")
	var calls, ends int
	h := modelstream.HandlerFuncs{
		OnCall: func(context.Context, modelstream.Call) error { calls++; return errStop },
		OnEnd:  func(context.Context, modelstream.End) error { ends++; return nil },
	}
	err := p.Parse(context.Background(), bytes.NewReader(data), h)
	if !errors.Is(err, errStop) {
		t.Fatalf("Parse = %v, want it to wrap %v", err, errStop)
	}
	if calls != 1 || ends != 0 {
		t.Errorf("after the handler failed: %d calls, %d ends; want 1, 0", calls, ends)
	}

	h = modelstream.HandlerFuncs{OnEnd: func(context.Context, modelstream.End) error { return errStop }}
	if err := p.Parse(context.Background(), bytes.NewReader(data), h); !errors.Is(err, errStop) {
		t.Errorf("Parse with a failing End = %v, want it to wrap %v", err, errStop)
	}
}

// CheckContextCancelled parses data, a stream with at least two calls that
// arrive in one read, cancelling the context in the first Call: Parse must
// return context.Canceled without reporting anything more.
func CheckContextCancelled(t *testing.T, p modelstream.Parser, data []byte) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls, ends int
	h := modelstream.HandlerFuncs{
		OnCall: func(context.Context, modelstream.Call) error { calls++; cancel(); return nil },
		OnEnd:  func(context.Context, modelstream.End) error { ends++; return nil },
	}
	err := p.Parse(ctx, bytes.NewReader(data), h)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Parse = %v, want context.Canceled", err)
	}
	if calls != 1 || ends != 0 {
		t.Errorf("after cancel: %d calls, %d ends; want 1, 0", calls, ends)
	}
}

// CheckReadError parses data followed by a failing read: Parse must return
// the read error, the contract c hold, and End.Err cite the read error after
// the last byte of data. It returns the result and that citation, for the
// format's checks of the calls.
func CheckReadError(t *testing.T, p modelstream.Parser, data []byte, c Contract) (*Result, string) {
	t.Helper()
	errConn := errors.New("connection reset")
	r := io.MultiReader(bytes.NewReader(data), iotest.ErrReader(errConn))
	var res Result
	err := p.Parse(context.Background(), r, &res)
	if !errors.Is(err, errConn) {
		t.Fatalf("Parse = %v, want it to wrap %v", err, errConn)
	}
	CheckContract(t, &res, c)
	want := fmt.Sprintf("read error after byte %d: connection reset", len(data))
	if res.Ends[0].Err != want {
		t.Errorf("End.Err = %q, want %q", res.Ends[0].Err, want)
	}
	return &res, want
}
