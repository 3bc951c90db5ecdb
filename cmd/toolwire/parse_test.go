package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/parselines"
	"github.com/toolwire/toolwire/modelstream/formats"
)

// fixtureFormat is the format of a captured stream, by its file name.
func fixtureFormat(name string) string {
	for prefix, f := range map[string]string{
		"anthropic_": "anthropic", "openai_chat_": "openai-chat", "openai_responses_": "openai-responses",
		"gemini": "gemini", "hermes": "hermes",
	} {
		if strings.HasPrefix(name, prefix) {
			return f
		}
	}
	return ""
}

// TestParseFixtures runs every captured stream through `toolwire parse` and
// checks the calls its SOURCES.md row describes and the output contract.
func TestParseFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(fixtures, "*"))
	if len(files) == 0 {
		t.Fatalf("no fixtures under %s", fixtures)
	}
	want := map[string][]string{
		"anthropic_text_then_tool_use.sse":                       {"get_weather"},
		"anthropic_tool_use_only_haiku45.sse":                    {"get_weather"},
		"anthropic_parallel_tool_use.sse":                        {"secret_retrieval_tool", "secret_retrieval_tool"},
		"anthropic_max_tokens_mid_tool_use.sse":                  {"make_file!"},
		"anthropic_tool_no_args.chunks.jsonl":                    {"updateIssueList"},
		"openai_chat_parallel_fragmented.sse":                    {"GetWeatherArgs", "get_stock_price"},
		"openai_chat_parallel_empty_object_args.sse":             {"get_country", "get_product_name"},
		"openai_chat_groq_error_midstream.sse":                   {},
		"openai_chat_compat_index_starts_at_1.sse":               {"read_file"},
		"openai_responses_parallel_function_calls.sse":           {"secret_retrieval_tool", "secret_retrieval_tool"},
		"openai_responses_reasoning_text_then_function_call.sse": {"get_capital"},
		"openai_responses_custom_tool_call.chunks.jsonl":         {"write_sql"},
		"openai_responses_local_shell_call.chunks.jsonl":         {"local_shell"},
		"openai_responses_shell_call.chunks.jsonl":               {"shell"},
		"openai_responses_shell_call_hosted.chunks.jsonl":        {},
		"openai_responses_apply_patch_call.chunks.jsonl":         {"apply_patch"},
		"openai_responses_client_tool_search_call.chunks.jsonl":  {"tool_search"},
		"gemini_parallel_function_calls.sse":                     {"*", "*"},
		"gemini3_function_call_with_id.sse":                      {"*"},
		"gemini_vertex_streamed_args.chunks.jsonl":               {"read_theme", "read_screen", "read_screen", "read_screen"},
		"hermes_qwen25_two_calls.txt":                            {"get_current_temperature", "get_temperature_date"},
		"hermes2pro_arguments_first.txt":                         {"*"},
	}
	// failing lists the fixtures whose stream itself failed: parse prints
	// every line, then exits non-zero.
	failing := map[string]string{"openai_chat_groq_error_midstream.sse": "tool_use_failed"}
	known := formats.Names()
	for _, f := range files {
		name := filepath.Base(f)
		if name == "SOURCES.md" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			format := fixtureFormat(name)
			if !slices.Contains(known, format) {
				t.Skipf("format %q not built in", format)
			}
			names, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			args := []string{"parse", "--format", format, f}
			if strings.HasSuffix(name, ".chunks.jsonl") {
				args = append(args, "--chunks")
			}
			out, err := runCLI(t, args...)
			if want, fails := failing[name]; fails {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("parse of a failed stream: error %v, want one citing %q", err, want)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			size, _ := os.Stat(f)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			var end parselines.EndLine
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &end); err != nil || !end.End {
				t.Fatalf("last line %q", lines[len(lines)-1])
			}
			calls := lines[:len(lines)-1]
			if len(calls) != len(names) || end.Calls != len(names) {
				t.Fatalf("%d calls (end says %d), want %d:\n%s", len(calls), end.Calls, len(names), out)
			}
			if name == "openai_chat_groq_error_midstream.sse" && (end.Error == nil || !strings.Contains(*end.Error, "tool_use_failed")) {
				t.Errorf("groq error not reported: %s", lines[len(lines)-1])
			}
			last := int64(0)
			for i, line := range calls {
				var raw map[string]json.RawMessage
				var c parselines.CallLine
				if json.Unmarshal([]byte(line), &raw) != nil || json.Unmarshal([]byte(line), &c) != nil {
					t.Fatalf("line %d: %q", i, line)
				}
				wantName := strings.TrimSuffix(names[i], "!")
				incomplete := strings.HasSuffix(names[i], "!")
				if c.Seq != i || c.ID == "" || (wantName != "*" && c.Name != wantName) || c.Complete == incomplete {
					t.Errorf("call %d: %s", i, line)
				}
				if _, hasInput := raw["input"]; hasInput == incomplete || (incomplete && c.Error == "") {
					t.Errorf("call %d: input/error contract broken: %s", i, line)
				}
				if c.At <= 0 || c.At < last || c.At > size.Size() {
					t.Errorf("call %d: at %d (previous %d, file %d bytes)", i, c.At, last, size.Size())
				}
				last = c.At
			}
		})
	}
}

func TestParseStdinAndErrors(t *testing.T) {
	if _, err := runCLI(t, "parse", "--format", "nope", "x"); err == nil || !strings.Contains(err.Error(), "anthropic") {
		t.Errorf("unknown format: %v", err)
	}
	if _, err := runCLI(t, "parse", "x"); err == nil {
		t.Error("missing --format accepted")
	}
}

// TestParseInterleavedChat: a Chat Completions stream whose two calls'
// fragments alternate (llama.cpp, vLLM) prints both calls whole, each at
// the offset just past the fragment that closed its arguments.
func TestParseInterleavedChat(t *testing.T) {
	chunk := func(index int, frag string) string {
		return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":` +
			strconv.Itoa(index) + `,` + frag + `}]},"finish_reason":null}]}` + "\n\n"
	}
	events := []string{
		chunk(0, `"id":"call_a","type":"function","function":{"name":"Read","arguments":""}`),
		chunk(1, `"id":"call_b","type":"function","function":{"name":"Glob","arguments":""}`),
		chunk(0, `"function":{"arguments":"{\"file_path\":"}`),
		chunk(1, `"function":{"arguments":"{\"pattern\":"}`),
		chunk(0, `"function":{"arguments":"\"/etc/hosts\"}"}`),
		chunk(1, `"function":{"arguments":"\"*.go\"}"}`),
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n",
		"data: [DONE]\n\n",
	}
	var stream strings.Builder
	var ends []int64
	for _, e := range events {
		stream.WriteString(e)
		ends = append(ends, int64(stream.Len()))
	}
	file := filepath.Join(t.TempDir(), "interleaved.sse")
	if err := os.WriteFile(file, []byte(stream.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "parse", "--format", "openai-chat", file)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"seq":0,"id":"call_a","name":"Read","input":{"file_path":"/etc/hosts"},"complete":true,"at":` + strconv.FormatInt(ends[4], 10) + `}`,
		`{"seq":1,"id":"call_b","name":"Glob","input":{"pattern":"*.go"},"complete":true,"at":` + strconv.FormatInt(ends[5], 10) + `}`,
		`{"end":true,"calls":2,"stop_reason":"tool_calls","error":null,"warnings":0}`,
	}
	if got := strings.Split(strings.TrimSpace(out), "\n"); !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestParseWarnings: an unreadable event that cannot hold a call (a broken
// response.created) is skipped; the end record counts and describes it, and
// parse exits 0, as the stream's calls are whole.
func TestParseWarnings(t *testing.T) {
	stream := "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\n\n" +
		"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":" +
		"{\"id\":\"fc_1\",\"type\":\"function_call\",\"status\":\"completed\",\"arguments\":\"{}\",\"call_id\":\"call_1\",\"name\":\"f\"}}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"output\":[]}}\n\n"
	file := filepath.Join(t.TempDir(), "broken_created.sse")
	if err := os.WriteFile(file, []byte(stream), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "parse", "--format", "openai-responses", file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var end parselines.EndLine
	if len(lines) != 2 || json.Unmarshal([]byte(lines[1]), &end) != nil {
		t.Fatalf("output:\n%s", out)
	}
	first := strconv.Itoa(strings.Index(stream, "event: response.output_item.done"))
	if end.Calls != 1 || end.Error != nil || end.Warnings != 1 ||
		!strings.HasPrefix(end.Warning, "skipped unreadable response.created event at bytes 0-"+first+": unexpected end of JSON input") {
		t.Errorf("end record %s", lines[1])
	}
}
