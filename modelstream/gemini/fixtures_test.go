package gemini

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
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

type fixture struct {
	file  string
	calls []wantCall
	end   modelstream.End
}

func fixtureFile(fx fixture) string { return fx.file }

var fixtures = []fixture{
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
	streamtest.EachFixture(t, fixtureDir, fixtures, fixtureFile, func(t *testing.T, fx fixture, data []byte) {
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
				t.Errorf("call %d At = %d, want %d (just past %q)", i, c.At, wantAt, streamtest.Tail(data[:wantAt]))
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

// TestFixturesRechunked feeds every fixture cut at every byte boundary, one
// byte at a time and in random sizes: the results must not change.
func TestFixturesRechunked(t *testing.T) {
	streamtest.EachFixture(t, fixtureDir, fixtures, fixtureFile, func(t *testing.T, _ fixture, data []byte) {
		streamtest.CheckRechunked(t, parse, data, streamtest.Feeds{Seed: 11, Rounds: 50, MaxRead: 64})
	})
}

// TestFixturesReframed reads the fixtures with other line ends: CRLF for
// the LF ones and LF for the CRLF ones. The calls must not change, and their
// offsets must follow the new framing.
func TestFixturesReframed(t *testing.T) {
	streamtest.EachFixture(t, fixtureDir, fixtures, fixtureFile, func(t *testing.T, fx fixture, data []byte) {
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

// TestCallReportedBeforeNextEvent paces the Vertex fixture event by event
// through a pipe and checks that each call is reported before the event
// after the one completing it is even written: the parser must not wait for
// more input.
func TestCallReportedBeforeNextEvent(t *testing.T) {
	data := loadFixture(t, "gemini_vertex_streamed_args.chunks.jsonl")
	got, _ := streamtest.CheckPaced(t, New(), data, func(ev []byte) bool {
		return bytes.Contains(ev, []byte(`"functionCall":{}`)) || bytes.Contains(ev, []byte(`"name":"read_theme"`))
	})
	for _, c := range got {
		if !c.Complete {
			t.Errorf("call %d reported incomplete while pacing: %s", c.Seq, c.Err)
		}
	}
	if len(got) != 4 {
		t.Errorf("got %d calls while pacing, want 4", len(got))
	}
}
