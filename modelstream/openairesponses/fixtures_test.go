package openairesponses

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
	"github.com/toolwire/toolwire/modelstream/sse"
)

// wantCall is what a fixture's call must be, per its row in SOURCES.md.
type wantCall struct {
	id, name, input, raw string
	// endMarker is a byte string inside the event that completes the call;
	// the expected At is found from it, independently of the parser.
	endMarker string
}

var fixtures = []struct {
	file  string
	calls []wantCall
	end   modelstream.End
}{
	{
		file: "openai_responses_parallel_function_calls.sse",
		calls: []wantCall{
			{
				// call_id, not the fc_ item id, is what tool results cite.
				id: "call_sKC7OABqf2A2PTLCm0CLeRWV", name: "secret_retrieval_tool",
				raw: `{"password":"mellon"}`, input: `{"password":"mellon"}`,
				endMarker: `"type":"response.function_call_arguments.done","sequence_number":10,`,
			},
			{
				id: "call_OdR3s3xop0vtgkDyWRMLafuH", name: "secret_retrieval_tool",
				raw: `{"password":"radiance"}`, input: `{"password":"radiance"}`,
				endMarker: `"type":"response.function_call_arguments.done","sequence_number":19,`,
			},
		},
		end: modelstream.End{Calls: 2, StopReason: "completed"},
	},
	{
		file: "openai_responses_reasoning_text_then_function_call.sse",
		calls: []wantCall{{
			id: "call_LabG58Uhrq9kZvR52BYKjToD", name: "get_capital",
			raw: `{"country":"PotatoLand"}`, input: `{"country":"PotatoLand"}`,
			endMarker: `{"type":"response.function_call_arguments.done",`,
		}},
		end: modelstream.End{Calls: 1, StopReason: "completed"},
	},
}

// eventEnd finds, independently of the parser, the byte offset just past the
// event holding marker: its blank line, or the end of the data.
func eventEnd(t *testing.T, data []byte, marker string) int64 {
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

func TestFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			data := loadFixture(t, fx.file)
			res := parse(t, bytes.NewReader(data))
			if len(res.Calls) != len(fx.calls) {
				t.Fatalf("got %d calls, want %d: %+v", len(res.Calls), len(fx.calls), res.Calls)
			}
			for i, w := range fx.calls {
				c := res.Calls[i]
				if c.ID != w.id || c.Name != w.name || c.RawInput != w.raw || !c.Complete || string(c.Input) != w.input {
					t.Errorf("call %d = {ID %q Name %q RawInput %q Complete %v Input %s Err %q}, want {%q %q %q true %s}",
						i, c.ID, c.Name, c.RawInput, c.Complete, c.Input, c.Err, w.id, w.name, w.raw, w.input)
				}
				if wantAt := eventEnd(t, data, w.endMarker); c.At != wantAt {
					t.Errorf("call %d At = %d, want %d (just past %q)", i, c.At, wantAt, tail(data[:wantAt]))
				}
			}
			if res.Ends[0] != fx.end {
				t.Errorf("End = %+v\nwant  %+v", res.Ends[0], fx.end)
			}
		})
	}
}

// TestFixturesListed makes sure every openai_responses_* capture is checked above.
func TestFixturesListed(t *testing.T) {
	names, _ := filepath.Glob(filepath.Join(fixtureDir, fixturePattern))
	if len(names) == 0 {
		t.Skipf("no %s fixtures in %s", fixturePattern, fixtureDir)
	}
	listed := map[string]bool{}
	for _, fx := range fixtures {
		listed[fx.file] = true
	}
	for _, n := range names {
		if !listed[filepath.Base(n)] {
			t.Errorf("fixture %s has no expectations in TestFixtures", filepath.Base(n))
		}
	}
}

func tail(b []byte) string {
	const n = 60
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// TestFixturesRechunked feeds every fixture cut at every byte boundary, one
// byte at a time and in random sizes: the results must not change.
func TestFixturesRechunked(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			data := loadFixture(t, fx.file)
			want := parse(t, bytes.NewReader(data))
			checkRechunked(t, data, want)
		})
	}
}

func checkRechunked(t *testing.T, data []byte, want *result) {
	t.Helper()
	check := func(how string, r io.Reader) {
		t.Helper()
		if got := parse(t, r); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %+v\nwant %+v", how, got, want)
		}
	}
	step := 1
	if raceEnabled && len(data) > 4<<10 {
		step = 13 // see race_test.go; one byte at a time below still cuts everywhere
	}
	streamtest.Rechunk(data, streamtest.Feeds{Step: step, Seed: uint64(len(data)), Rounds: 50, MaxRead: 64}, check)
}

// TestCallReportedBeforeNextEvent paces a fixture event by event through a
// pipe and checks that each call is reported before the event after its
// function_call_arguments.done is even written: the parser must not wait
// for output_item.done or more input.
func TestCallReportedBeforeNextEvent(t *testing.T) {
	data := loadFixture(t, "openai_responses_parallel_function_calls.sse")
	pr, pw := io.Pipe()
	calls := make(chan modelstream.Call, 4)
	h := modelstream.HandlerFuncs{
		OnCall: func(_ context.Context, c modelstream.Call) error { calls <- c; return nil },
	}
	done := make(chan error, 1)
	go func() { done <- New().Parse(context.Background(), pr, h) }()

	var off int64
	var seen int
	for _, chunk := range sse.Split(data) {
		if _, err := pw.Write(chunk); err != nil {
			t.Fatal(err)
		}
		off += int64(len(chunk))
		if !bytes.Contains(chunk, []byte("event: response.function_call_arguments.done")) {
			continue
		}
		select {
		case c := <-calls:
			if c.Seq != seen || c.At != off {
				t.Errorf("call %d At = %d, want call %d at %d", c.Seq, c.At, seen, off)
			}
			seen++
		case <-time.After(5 * time.Second):
			t.Fatalf("no call reported after the event ending at byte %d", off)
		}
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if seen != 2 {
		t.Errorf("saw %d calls, want 2", seen)
	}
	select {
	case c := <-calls:
		t.Errorf("call %d reported twice", c.Seq)
	default:
	}
	if strings.Count(string(data), "event: response.output_item.done\n") != 2 {
		t.Errorf("fixture changed: want two output_item.done events")
	}
}
