package openairesponses

import (
	"bytes"
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
}

func fixtureFile(fx fixture) string { return fx.file }

var fixtures = []fixture{
	{
		file: "openai_responses_parallel_function_calls.sse",
		calls: []wantCall{
			{
				// call_id, not the fc_ item id, is what tool results cite.
				ID: "call_sKC7OABqf2A2PTLCm0CLeRWV", Name: "secret_retrieval_tool",
				Raw: `{"password":"mellon"}`, Input: `{"password":"mellon"}`,
				EndMarker: `"type":"response.function_call_arguments.done","sequence_number":10,`,
			},
			{
				ID: "call_OdR3s3xop0vtgkDyWRMLafuH", Name: "secret_retrieval_tool",
				Raw: `{"password":"radiance"}`, Input: `{"password":"radiance"}`,
				EndMarker: `"type":"response.function_call_arguments.done","sequence_number":19,`,
			},
		},
		end: modelstream.End{Calls: 2, StopReason: "completed"},
	},
	{
		file: "openai_responses_reasoning_text_then_function_call.sse",
		calls: []wantCall{{
			ID: "call_LabG58Uhrq9kZvR52BYKjToD", Name: "get_capital",
			Raw: `{"country":"PotatoLand"}`, Input: `{"country":"PotatoLand"}`,
			EndMarker: `{"type":"response.function_call_arguments.done",`,
		}},
		end: modelstream.End{Calls: 1, StopReason: "completed"},
	},
	{
		// Free-form input, streamed as custom_tool_call_input.delta, is wrapped as {"input": text}.
		file: "openai_responses_custom_tool_call.chunks.jsonl",
		calls: []wantCall{{
			ID: "call_custom_sql_001", Name: "write_sql",
			Raw: `SELECT * FROM users WHERE age > 25`, Input: `{"input":"SELECT * FROM users WHERE age > 25"}`,
			EndMarker: `{"type":"response.output_item.done","output_index":0,`,
		}},
		end: modelstream.End{Calls: 1, StopReason: "completed"},
	},
	{
		file: "openai_responses_local_shell_call.chunks.jsonl",
		calls: []wantCall{{
			ID: "call_h3nm8hUG0KO9tVNuRACkL1ri", Name: "local_shell",
			Raw: `{"type":"exec","command":["ls","-a","~"],"env":{}}`, Input: `{"type":"exec","command":["ls","-a","~"],"env":{}}`,
			EndMarker: `"type":"response.output_item.done","sequence_number":5,`,
		}},
		end: modelstream.End{Calls: 1, StopReason: "completed"},
	},
	{
		file: "openai_responses_shell_call.chunks.jsonl",
		calls: []wantCall{{
			ID: "call_pbxjNs1tMJUahLZKAS9qLtvw", Name: "shell",
			Raw:       `{"commands":["ls -a ~/Desktop"],"max_output_length":8912,"timeout_ms":null}`,
			Input:     `{"commands":["ls -a ~/Desktop"],"max_output_length":8912,"timeout_ms":null}`,
			EndMarker: `"type":"response.output_item.done","sequence_number":10,`,
		}},
		end: modelstream.End{Calls: 1, StopReason: "completed"},
	},
	{
		// A shell_call in a hosted container runs on OpenAI's side: no call.
		file: "openai_responses_shell_call_hosted.chunks.jsonl",
		end:  modelstream.End{Calls: 0, StopReason: "completed"},
	},
	{
		file: "openai_responses_apply_patch_call.chunks.jsonl",
		calls: []wantCall{{
			ID: "call_kA46f91ZwocQyMCKyyZqRyC5", Name: "apply_patch",
			Raw:       `{"type":"create_file","diff":"+## Shopping Checklist\n+\n+- [ ] Milk\n+- [ ] Bread\n+- [ ] Eggs\n+- [ ] Fresh fruit\n+- [ ] Coffee\n","path":"shopping-checklist.md"}`,
			Input:     `{"type":"create_file","diff":"+## Shopping Checklist\n+\n+- [ ] Milk\n+- [ ] Bread\n+- [ ] Eggs\n+- [ ] Fresh fruit\n+- [ ] Coffee\n","path":"shopping-checklist.md"}`,
			EndMarker: `"type":"response.output_item.done","sequence_number":36,`,
		}},
		end: modelstream.End{Calls: 1, StopReason: "completed"},
	},
	{
		// output_item.added and .done carry different call_ids; the done
		// item's is the one response.completed repeats, so results cite it.
		file: "openai_responses_client_tool_search_call.chunks.jsonl",
		calls: []wantCall{{
			ID: "call_RWTIIVfxsJW9fecsg6fy23Dy", Name: "tool_search",
			Raw:       `{"goal":"Find a tool that can provide current weather information for San Francisco."}`,
			Input:     `{"goal":"Find a tool that can provide current weather information for San Francisco."}`,
			EndMarker: `{"type":"response.output_item.done","item":{"id":"tsc_`,
		}},
		end: modelstream.End{Calls: 1, StopReason: "completed"},
	},
}

func TestFixtures(t *testing.T) {
	streamtest.EachFixture(t, fixtureDir, fixtures, fixtureFile, func(t *testing.T, fx fixture, data []byte) {
		res := parse(t, bytes.NewReader(data))
		streamtest.CheckMarkedCalls(t, data, res, fx.calls)
		if res.Ends[0] != fx.end {
			t.Errorf("End = %+v\nwant  %+v", res.Ends[0], fx.end)
		}
	})
}

// TestFixturesListed makes sure every openai_responses_* capture is checked above.
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
// pipe and checks that each call is reported before the event after its
// function_call_arguments.done is even written: the parser must not wait
// for output_item.done or more input.
func TestCallReportedBeforeNextEvent(t *testing.T) {
	data := loadFixture(t, "openai_responses_parallel_function_calls.sse")
	got, later := streamtest.CheckPaced(t, New(), data, func(ev []byte) bool {
		return bytes.Contains(ev, []byte("event: response.function_call_arguments.done"))
	})
	for i, c := range got {
		if c.Seq != i {
			t.Errorf("call %d reported as call %d while pacing", c.Seq, i)
		}
	}
	if len(got) != 2 {
		t.Errorf("saw %d calls, want 2", len(got))
	}
	select {
	case c := <-later:
		t.Errorf("call %d reported twice", c.Seq)
	default:
	}
	if strings.Count(string(data), "event: response.output_item.done\n") != 2 {
		t.Errorf("fixture changed: want two output_item.done events")
	}
}
