package openaichat

import (
	"bytes"
	"context"
	"fmt"
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
	// endErrMarker, when set, marks the start of the event whose bytes End.Err cites.
	endErrMarker string
	endErr       string
}{
	{
		file: "openai_chat_parallel_fragmented.sse",
		calls: []wantCall{
			{
				id: "call_JMW1whyEaYG438VE1OIflxA2", name: "GetWeatherArgs",
				raw:       `{"city": "Edinburgh", "country": "GB", "units": "c"}`,
				input:     `{"city":"Edinburgh","country":"GB","units":"c"}`,
				endMarker: `"tool_calls":[{"index":1,"id":"call_DNYTawLBoN8fj3KN6qU9N1Ou"`, // closed when index 1 starts
			},
			{
				id: "call_DNYTawLBoN8fj3KN6qU9N1Ou", name: "get_stock_price",
				raw:       `{"ticker": "AAPL", "exchange": "NASDAQ"}`,
				input:     `{"ticker":"AAPL","exchange":"NASDAQ"}`,
				endMarker: `"finish_reason":"tool_calls"`,
			},
		},
		end: modelstream.End{Calls: 2, StopReason: "tool_calls"},
	},
	{
		file: "openai_chat_parallel_empty_object_args.sse",
		calls: []wantCall{
			{
				id: "call_q2UyBRP7eXNTzAoR8lEhjc9Z", name: "get_country", raw: `{}`, input: `{}`,
				endMarker: `"tool_calls":[{"index":1,"id":"call_b51ijcpFkDiTQG1bQzsrmtW5"`,
			},
			{
				id: "call_b51ijcpFkDiTQG1bQzsrmtW5", name: "get_product_name", raw: `{}`, input: `{}`,
				endMarker: `"finish_reason":"tool_calls"`,
			},
		},
		end: modelstream.End{Calls: 2, StopReason: "tool_calls"},
	},
	{
		file:         "openai_chat_groq_error_midstream.sse",
		end:          modelstream.End{Calls: 0},
		endErrMarker: "event: error\n",
		endErr: "invalid_request_error tool_use_failed: Tool call validation failed: tool call validation failed: " +
			"parameters for tool get_something_by_name did not match schema: errors: " +
			"[missing properties: 'name', additionalProperties 'invalid_param' not allowed]",
	},
	{
		file: "openai_chat_compat_index_starts_at_1.sse",
		calls: []wantCall{{
			id: "toolu_sanitized", name: "read_file", raw: `{"path": "a.txt"}`, input: `{"path":"a.txt"}`,
			endMarker: `"finish_reason":"tool_calls"`,
		}},
		end: modelstream.End{Calls: 1, StopReason: "tool_calls"},
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
			want := fx.end
			if fx.endErrMarker != "" {
				start := bytes.Index(data, []byte(fx.endErrMarker))
				want.Err = fmt.Sprintf("error event at bytes %d-%d: %s", start, len(data), fx.endErr)
			}
			if res.Ends[0] != want {
				t.Errorf("End = %+v\nwant  %+v", res.Ends[0], want)
			}
		})
	}
}

// TestFixturesListed makes sure every openai_chat_* capture is checked above.
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
// pipe and checks that each call is reported before the event after the one
// completing it is even written: the parser must not wait for more input.
func TestCallReportedBeforeNextEvent(t *testing.T) {
	data := loadFixture(t, "openai_chat_parallel_fragmented.sse")
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
		if !bytes.Contains(chunk, []byte(`"index":1,"id"`)) && !bytes.Contains(chunk, []byte(`"finish_reason":"tool_calls"`)) {
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
	if strings.Count(string(data), "[DONE]") != 1 {
		t.Errorf("fixture changed: want one [DONE]")
	}
}
