package openaichat

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

// wantCall is what a fixture's call must be, per its row in SOURCES.md.
type wantCall = streamtest.MarkedCall

type fixture struct {
	file  string
	calls []wantCall
	end   modelstream.End
	// endErrMarker, when set, marks the start of the event whose bytes End.Err cites.
	endErrMarker string
	endErr       string
}

func fixtureFile(fx fixture) string { return fx.file }

var fixtures = []fixture{
	{
		file: "openai_chat_parallel_fragmented.sse",
		calls: []wantCall{
			{
				ID: "call_JMW1whyEaYG438VE1OIflxA2", Name: "GetWeatherArgs",
				Raw:       `{"city": "Edinburgh", "country": "GB", "units": "c"}`,
				Input:     `{"city":"Edinburgh","country":"GB","units":"c"}`,
				EndMarker: `{"arguments":"c\"}"}`, // its arguments close, before index 1 starts
			},
			{
				ID: "call_DNYTawLBoN8fj3KN6qU9N1Ou", Name: "get_stock_price",
				Raw:       `{"ticker": "AAPL", "exchange": "NASDAQ"}`,
				Input:     `{"ticker":"AAPL","exchange":"NASDAQ"}`,
				EndMarker: `{"arguments":"}"}`,
			},
		},
		end: modelstream.End{Calls: 2, StopReason: "tool_calls"},
	},
	{
		file: "openai_chat_parallel_empty_object_args.sse",
		calls: []wantCall{
			{
				ID: "call_q2UyBRP7eXNTzAoR8lEhjc9Z", Name: "get_country", Raw: `{}`, Input: `{}`,
				EndMarker: `"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]`,
			},
			{
				ID: "call_b51ijcpFkDiTQG1bQzsrmtW5", Name: "get_product_name", Raw: `{}`, Input: `{}`,
				EndMarker: `"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]`,
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
			ID: "toolu_sanitized", Name: "read_file", Raw: `{"path": "a.txt"}`, Input: `{"path":"a.txt"}`,
			EndMarker: `"arguments":"th\": \"a.txt\"}"`,
		}},
		end: modelstream.End{Calls: 1, StopReason: "tool_calls"},
	},
}

func TestFixtures(t *testing.T) {
	streamtest.EachFixture(t, fixtureDir, fixtures, fixtureFile, func(t *testing.T, fx fixture, data []byte) {
		res := parse(t, bytes.NewReader(data))
		streamtest.CheckMarkedCalls(t, data, res, fx.calls)
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

// TestFixturesListed makes sure every openai_chat_* capture is checked above.
func TestFixturesListed(t *testing.T) {
	streamtest.CheckFixturesListed(t, fixtureDir, fixturePattern, fixtures, fixtureFile)
}

// TestFixturesRechunked feeds every fixture cut at every byte boundary, one
// byte at a time and in random sizes: the results must not change.
func TestFixturesRechunked(t *testing.T) {
	streamtest.EachFixture(t, fixtureDir, fixtures, fixtureFile, func(t *testing.T, _ fixture, data []byte) {
		step := 1
		if raceEnabled && len(data) > 4<<10 {
			step = 13 // see race_test.go; one byte at a time below still cuts everywhere
		}
		streamtest.CheckRechunked(t, parse, data, streamtest.Feeds{Step: step, Seed: uint64(len(data)), Rounds: 50, MaxRead: 64})
	})
}

// TestCallReportedBeforeNextEvent paces a fixture event by event through a
// pipe and checks that each call is reported before the event after the one
// closing its arguments is even written: the parser must wait neither for
// the next call nor for finish_reason.
func TestCallReportedBeforeNextEvent(t *testing.T) {
	data := loadFixture(t, "openai_chat_parallel_fragmented.sse")
	got, _ := streamtest.CheckPaced(t, New(), data, func(ev []byte) bool {
		return bytes.Contains(ev, []byte(`{"arguments":"c\"}"}`)) || bytes.Contains(ev, []byte(`{"arguments":"}"}`))
	})
	for i, c := range got {
		if c.Seq != i {
			t.Errorf("call %d reported as call %d while pacing", c.Seq, i)
		}
	}
	if len(got) != 2 {
		t.Errorf("saw %d calls, want 2", len(got))
	}
	if strings.Count(string(data), "[DONE]") != 1 {
		t.Errorf("fixture changed: want one [DONE]")
	}
}
