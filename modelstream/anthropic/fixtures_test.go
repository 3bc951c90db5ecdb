package anthropic

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

// wantCall is what a fixture's call must be; At is checked separately
// against the bytes of the fixture.
type wantCall struct {
	id, name, input, raw string
	complete             bool
	errHas               string
	// stopIndex is the content-block index whose content_block_stop completes
	// the call, -1 when the call ends with the message_stop event instead.
	stopIndex int
}

type fixture struct {
	file  string
	calls []wantCall
	end   modelstream.End
}

func fixtureFile(fx fixture) string { return fx.file }

var fixtures = []fixture{
	{
		file: "anthropic_text_then_tool_use.sse",
		calls: []wantCall{{
			id: "toolu_01NRLabsLyVHZPKxbKvkfSMn", name: "get_weather",
			input: `{"location":"Paris"}`, raw: `{"location": "Paris"}`, complete: true, stopIndex: 1,
		}},
		end: modelstream.End{Calls: 1, StopReason: "tool_use"},
	},
	{
		file: "anthropic_tool_use_only_haiku45.sse",
		calls: []wantCall{{
			id: "toolu_018acGYLtfR52q9yDbWaEdQZ", name: "get_weather",
			input:    `{"location":"San Francisco, CA","units":"f"}`,
			raw:      `{"location": "San Francisco, CA", "units": "f"}`,
			complete: true, stopIndex: 0,
		}},
		end: modelstream.End{Calls: 1, StopReason: "tool_use"},
	},
	{
		file: "anthropic_parallel_tool_use.sse",
		calls: []wantCall{
			{
				id: "toolu_015cUijgET79LXjgeYQerN2h", name: "secret_retrieval_tool",
				input: `{"password":"mellon"}`, raw: `{"password": "mellon"}`, complete: true, stopIndex: 1,
			},
			{
				id: "toolu_01XZTimPexA7h3EVKesnKt5T", name: "secret_retrieval_tool",
				input: `{"password":"radiance"}`, raw: `{"password": "radiance"}`, complete: true, stopIndex: 2,
			},
		},
		end: modelstream.End{Calls: 2, StopReason: "tool_use"},
	},
	{
		file: "anthropic_max_tokens_mid_tool_use.sse",
		calls: []wantCall{{
			id: "toolu_01EKqbqmZrGRXy18eN7m9kvY", name: "make_file",
			raw:       "{\"filename\": \"taxes.txt\", \"lines_of_text\": [\n\"# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s\",\n\"\",\n\"## INTRODUCTION\",\n\"\",\n\"Filing taxes",
			errHas:    "tool call incomplete: the stream ended before the tool_use block was complete (stop_reason max_tokens)",
			stopIndex: -1,
		}},
		end: modelstream.End{Calls: 1, StopReason: "max_tokens"},
	},
	{
		file: "anthropic_tool_no_args.chunks.jsonl",
		calls: []wantCall{{
			id: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", name: "updateIssueList",
			input: `{}`, raw: ``, complete: true, stopIndex: 1,
		}},
		end: modelstream.End{Calls: 1, StopReason: "tool_use"},
	},
}

// stopEnd finds, independently of the parser, the byte offset just past the
// content_block_stop event for index in a fixture.
func stopEnd(t *testing.T, data []byte, index int) int64 {
	t.Helper()
	re := regexp.MustCompile(fmt.Sprintf(`"type":"content_block_stop","index":%d\D`, index))
	loc := re.FindIndex(data)
	if loc == nil {
		t.Fatalf("no content_block_stop for index %d in the fixture", index)
	}
	blank := bytes.Index(data[loc[1]:], []byte("\n\n"))
	if blank < 0 {
		t.Fatalf("content_block_stop for index %d is not followed by a blank line", index)
	}
	return int64(loc[1] + blank + 2)
}

func TestFixtures(t *testing.T) {
	streamtest.EachFixture(t, fixtureDir, fixtures, fixtureFile, func(t *testing.T, fx fixture, data []byte) {
		res := parse(t, bytes.NewReader(data))
		if len(res.Calls) != len(fx.calls) {
			t.Fatalf("got %d calls, want %d: %+v", len(res.Calls), len(fx.calls), res.Calls)
		}
		for i, w := range fx.calls {
			c := res.Calls[i]
			if c.ID != w.id || c.Name != w.name || c.RawInput != w.raw || c.Complete != w.complete {
				t.Errorf("call %d = {ID %q Name %q RawInput %q Complete %v}, want {%q %q %q %v}",
					i, c.ID, c.Name, c.RawInput, c.Complete, w.id, w.name, w.raw, w.complete)
			}
			if w.complete && string(c.Input) != w.input {
				t.Errorf("call %d Input = %s, want %s", i, c.Input, w.input)
			}
			if !strings.Contains(c.Err, w.errHas) {
				t.Errorf("call %d Err = %q, want it to contain %q", i, c.Err, w.errHas)
			}
			wantAt := int64(len(data)) // the message_stop event, unterminated, ends the file
			if w.stopIndex >= 0 {
				wantAt = stopEnd(t, data, w.stopIndex)
			}
			if c.At != wantAt {
				t.Errorf("call %d At = %d, want %d (just past %q)", i, c.At, wantAt, streamtest.Tail(data[:wantAt]))
			}
		}
		if res.Ends[0] != fx.end {
			t.Errorf("End = %+v, want %+v", res.Ends[0], fx.end)
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

// TestCallReportedBeforeNextEvent paces a fixture event by event through a
// pipe and checks that each call is reported before the event after its
// content_block_stop is even written: the parser must not wait for more input.
func TestCallReportedBeforeNextEvent(t *testing.T) {
	data := loadFixture(t, "anthropic_parallel_tool_use.sse")
	streamtest.CheckPaced(t, New(), data, func(ev []byte) bool {
		return bytes.Contains(ev, []byte("content_block_stop")) && !bytes.Contains(ev, []byte(`"index":0`))
	})
}
