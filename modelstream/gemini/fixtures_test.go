package gemini

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
	"github.com/toolwire/toolwire/modelstream/sse"
)

// wantCall is what a fixture's call must be. At is checked against the
// fixture's bytes: the call completes with the event holding the nth
// (1-based) occurrence of marker.
type wantCall struct {
	// id is the provider's id; "" wants a synthesized one.
	id, name, input, raw string
	marker               string
	nth                  int
}

var fixtures = []struct {
	file  string
	calls []wantCall
	end   modelstream.End
}{
	{
		file: "gemini3_function_call_with_id.sse",
		calls: []wantCall{{
			id: "96c1su3s", name: "get_user_country", input: `{}`, raw: `{}`,
			marker: `"id": "96c1su3s"`, nth: 1,
		}},
		end: modelstream.End{Calls: 1, StopReason: "STOP"},
	},
	{
		file: "gemini_parallel_function_calls.sse",
		calls: []wantCall{
			{
				name: "secret_retrieval_tool", input: `{"password":"mellon"}`, raw: `{"password": "mellon"}`,
				marker: `"mellon"`, nth: 1,
			},
			{
				name: "secret_retrieval_tool", input: `{"password":"radiance"}`, raw: `{"password": "radiance"}`,
				marker: `"radiance"`, nth: 1,
			},
		},
		end: modelstream.End{Calls: 2, StopReason: "STOP"},
	},
	{
		file: "gemini_vertex_streamed_args.chunks.jsonl",
		calls: []wantCall{
			{name: "read_theme", input: `{}`, raw: ``, marker: `"name":"read_theme"`, nth: 1},
			{name: "read_screen", input: `{"id":"A"}`, raw: `{"id":"A"}`, marker: `"functionCall":{}`, nth: 1},
			{name: "read_screen", input: `{"id":"B"}`, raw: `{"id":"B"}`, marker: `"functionCall":{}`, nth: 2},
			{name: "read_screen", input: `{"id":"C"}`, raw: `{"id":"C"}`, marker: `"functionCall":{}`, nth: 3},
		},
		end: modelstream.End{Calls: 4, StopReason: "STOP"},
	},
}

// eventEnd finds, independently of the parser, the byte offset just past
// the blank line that ends the event holding the nth occurrence of marker.
func eventEnd(t testing.TB, data []byte, marker string, nth int) int64 {
	t.Helper()
	pos := 0
	for k := range nth {
		i := bytes.Index(data[pos:], []byte(marker))
		if i < 0 {
			t.Fatalf("occurrence %d of %q not in the fixture", k+1, marker)
		}
		pos += i + len(marker)
	}
	best := -1
	for _, sep := range []string{"\n\n", "\r\n\r\n", "\r\r"} {
		if i := bytes.Index(data[pos:], []byte(sep)); i >= 0 && (best < 0 || pos+i+len(sep) < best) {
			best = pos + i + len(sep)
		}
	}
	if best < 0 {
		return int64(len(data)) // an unterminated last event
	}
	return int64(best)
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
				if c.Name != w.name || c.RawInput != w.raw || !c.Complete || string(c.Input) != w.input {
					t.Errorf("call %d = {Name %q RawInput %q Complete %v Input %s Err %q}, want {%q %q true %s}",
						i, c.Name, c.RawInput, c.Complete, c.Input, c.Err, w.name, w.raw, w.input)
				}
				wantID := w.id
				if wantID == "" {
					wantID = fmt.Sprintf("call_gemini_%d_", i)
					if !strings.HasPrefix(c.ID, wantID) || len(c.ID) != len(wantID)+24 {
						t.Errorf("call %d ID = %q, want a synthesized %s<24 hex digits>", i, c.ID, wantID)
					}
				} else if c.ID != wantID {
					t.Errorf("call %d ID = %q, want %q", i, c.ID, wantID)
				}
				if strings.Contains(string(c.Input)+c.RawInput, "thoughtSignature") {
					t.Errorf("call %d carries the thoughtSignature in its input: %s", i, c.Input)
				}
				if wantAt := eventEnd(t, data, w.marker, w.nth); c.At != wantAt {
					t.Errorf("call %d At = %d, want %d (just past %q)", i, c.At, wantAt, tail(data[:wantAt]))
				}
			}
			if res.Ends[0] != fx.end {
				t.Errorf("End = %+v, want %+v", res.Ends[0], fx.end)
			}
			// Parallel calls have ids of their own.
			seen := map[string]bool{}
			for _, c := range res.Calls {
				if seen[c.ID] {
					t.Errorf("id %q given to two calls", c.ID)
				}
				seen[c.ID] = true
			}
		})
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
			check := func(how string, r io.Reader) {
				t.Helper()
				if got := parse(t, r); !reflect.DeepEqual(got, want) {
					t.Fatalf("%s:\n got %+v\nwant %+v", how, got, want)
				}
			}
			streamtest.Rechunk(data, streamtest.Feeds{Seed: 11, Rounds: 50, MaxRead: 64}, check)
		})
	}
}

// TestFixturesReframed reads the fixtures with other line ends: CRLF for
// the LF ones and LF for the CRLF ones. The calls must not change, and their
// offsets must follow the new framing.
func TestFixturesReframed(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			data := loadFixture(t, fx.file)
			var other []byte
			if bytes.Contains(data, []byte("\r\n")) {
				other = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
			} else {
				other = bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
			}
			want := parse(t, bytes.NewReader(data))
			got := parse(t, bytes.NewReader(other))
			if len(got.Calls) != len(want.Calls) || got.Ends[0] != want.Ends[0] {
				t.Fatalf("reframed: %+v, want %+v", got, want)
			}
			for i, c := range got.Calls {
				w := want.Calls[i]
				if c.ID != w.ID || c.Name != w.Name || string(c.Input) != string(w.Input) || c.Complete != w.Complete {
					t.Errorf("call %d reframed = %+v, want %+v", i, c, w)
				}
				if wantAt := eventEnd(t, other, fx.calls[i].marker, fx.calls[i].nth); c.At != wantAt {
					t.Errorf("call %d reframed At = %d, want %d", i, c.At, wantAt)
				}
			}
		})
	}
}

// TestCallReportedBeforeNextEvent paces the Vertex fixture event by event
// through a pipe and checks that each call is reported before the event
// after the one completing it is even written: the parser must not wait for
// more input.
func TestCallReportedBeforeNextEvent(t *testing.T) {
	data := loadFixture(t, "gemini_vertex_streamed_args.chunks.jsonl")
	pr, pw := io.Pipe()
	calls := make(chan modelstream.Call, 8)
	h := modelstream.HandlerFuncs{
		OnCall: func(_ context.Context, c modelstream.Call) error { calls <- c; return nil },
	}
	done := make(chan error, 1)
	go func() { done <- New().Parse(context.Background(), pr, h) }()

	var off int64
	var got int
	for _, chunk := range sse.Split(data) {
		if _, err := pw.Write(chunk); err != nil {
			t.Fatal(err)
		}
		off += int64(len(chunk))
		if !bytes.Contains(chunk, []byte(`"functionCall":{}`)) && !bytes.Contains(chunk, []byte(`"name":"read_theme"`)) {
			continue
		}
		select {
		case c := <-calls:
			got++
			if c.At != off || !c.Complete {
				t.Errorf("call %d At = %d Complete %v, want At %d and complete", c.Seq, c.At, c.Complete, off)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no call reported after the event ending at byte %d", off)
		}
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got != 4 {
		t.Errorf("got %d calls while pacing, want 4", got)
	}
}
