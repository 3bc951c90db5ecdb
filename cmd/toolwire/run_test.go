package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/localrun"
	"github.com/toolwire/toolwire/internal/testenv"
)

// fixtures is where the recorded model streams live in the repository.
const fixtures = "../../testdata/streams"

// runCLI runs `toolwire args...` in-process and returns stdout and the error.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRoot()
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

type outLines struct {
	results []localrun.ResultLine
	done    localrun.DoneLine
}

func parseLines(t *testing.T, out string) outLines {
	t.Helper()
	var o outLines
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, line := range lines {
		if i == len(lines)-1 {
			if err := json.Unmarshal([]byte(line), &o.done); err != nil || !o.done.TurnDone {
				t.Fatalf("last line is not turn_done: %q (%v)", line, err)
			}
			break
		}
		var r localrun.ResultLine
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("line %d: %v: %q", i, err, line)
		}
		o.results = append(o.results, r)
	}
	return o
}

func stamp(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestRunFixtures runs every captured Anthropic stream through `toolwire run`.
// Their tools (get_weather, ...) are not toolwire's, so each call is answered
// "No such tool available" by the router, in order; the stream cut off by
// max_tokens gives an "incomplete" result and is not run.
func TestRunFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(fixtures, "anthropic_*.sse"))
	if len(files) == 0 {
		t.Fatalf("no fixtures under %s", fixtures)
	}
	wantCalls := map[string][]string{
		"anthropic_text_then_tool_use.sse":      {"get_weather"},
		"anthropic_tool_use_only_haiku45.sse":   {"get_weather"},
		"anthropic_parallel_tool_use.sse":       {"secret_retrieval_tool", "secret_retrieval_tool"},
		"anthropic_max_tokens_mid_tool_use.sse": {"make_file"},
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			out, err := runCLI(t, "run", "--format", "anthropic", "--stream", f)
			if err != nil {
				t.Fatal(err)
			}
			o := parseLines(t, out)
			want, ok := wantCalls[name]
			if !ok {
				t.Fatalf("no expectation for %s", name)
			}
			if len(o.results) != len(want) || o.done.Calls != len(want) {
				t.Fatalf("%d results, turn_done calls %d; want %d\n%s", len(o.results), o.done.Calls, len(want), out)
			}
			for i, r := range o.results {
				if r.Seq != i || r.Name != want[i] || !r.IsError || r.Worker != "router" || r.Attempt != 0 {
					t.Errorf("result %d: %+v", i, r)
				}
				if name == "anthropic_max_tokens_mid_tool_use.sse" {
					if !strings.Contains(r.Content, "incomplete") {
						t.Errorf("cut-off call: %q does not say incomplete", r.Content)
					}
				} else if !strings.Contains(r.Content, "No such tool available: "+want[i]) {
					t.Errorf("result %d: %q", i, r.Content)
				}
			}
			if name == "anthropic_max_tokens_mid_tool_use.sse" && o.done.StopReason != "max_tokens" {
				t.Errorf("stop reason %q", o.done.StopReason)
			}
		})
	}
}

// TestRunResponsesClientItems: the Responses items the client executes
// besides function_call reach the pipeline as calls under their own names,
// so a tool not registered under that name answers their call_id with the
// usual unknown-tool result instead of leaving it unanswered.
func TestRunResponsesClientItems(t *testing.T) {
	for file, want := range map[string]struct{ name, id string }{
		"openai_responses_custom_tool_call.chunks.jsonl":        {"write_sql", "call_custom_sql_001"},
		"openai_responses_local_shell_call.chunks.jsonl":        {"local_shell", "call_h3nm8hUG0KO9tVNuRACkL1ri"},
		"openai_responses_shell_call.chunks.jsonl":              {"shell", "call_pbxjNs1tMJUahLZKAS9qLtvw"},
		"openai_responses_apply_patch_call.chunks.jsonl":        {"apply_patch", "call_kA46f91ZwocQyMCKyyZqRyC5"},
		"openai_responses_client_tool_search_call.chunks.jsonl": {"tool_search", "call_RWTIIVfxsJW9fecsg6fy23Dy"},
	} {
		t.Run(file, func(t *testing.T) {
			out, err := runCLI(t, "run", "--format", "openai-responses", "--chunks", "--stream", filepath.Join(fixtures, file))
			if err != nil {
				t.Fatal(err)
			}
			o := parseLines(t, out)
			if len(o.results) != 1 || o.done.Calls != 1 {
				t.Fatalf("%d results, turn_done calls %d; want 1\n%s", len(o.results), o.done.Calls, out)
			}
			r := o.results[0]
			if r.Name != want.name || r.ToolUseID != want.id || !r.IsError || !strings.Contains(r.Content, "No such tool available: "+want.name) {
				t.Errorf("result %+v, want the unknown-tool error for %s (%s)", r, want.name, want.id)
			}
		})
	}
}

// sleepStream is an Anthropic stream of Bash calls `sleep S && echo N`.
func sleepStream(n int, secs string) string {
	blocks := make([]testenv.ToolBlock, n)
	for i := range n {
		args, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("sleep %s && echo %d", secs, i)})
		blocks[i] = testenv.ToolBlock{ID: fmt.Sprintf("toolu_pace_%d", i), Name: "Bash", Args: string(args)}
	}
	return testenv.AnthropicStream("msg_pace", blocks...)
}

// TestRunPacedStreamStartsEarly: with the stream replayed at 50 ms an event,
// the first call starts before the stream ends and the three read-only
// calls run together.
func TestRunPacedStreamStartsEarly(t *testing.T) {
	f := filepath.Join(t.TempDir(), "three.sse")
	// The acceptance check uses 0.5 s sleeps; 1.5 s keeps the overlap
	// certain on a loaded machine.
	if err := os.WriteFile(f, []byte(sleepStream(3, "1.5")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "run", "--format", "anthropic", "--stream", f, "--pace", "50ms", "--workdir", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o := parseLines(t, out)
	if len(o.results) != 3 {
		t.Fatalf("%d results:\n%s", len(o.results), out)
	}
	ended := stamp(t, o.done.StreamEndedAt)
	if first := stamp(t, o.results[0].StartedAt); !first.Before(ended) {
		t.Errorf("first call started at %s, not before the stream ended at %s", first, ended)
	}
	for i, a := range o.results {
		if a.IsError || strings.TrimSpace(a.Content) != fmt.Sprint(i) {
			t.Errorf("result %d: %+v", i, a)
		}
		for _, b := range o.results[i+1:] {
			if !stamp(t, b.StartedAt).Before(stamp(t, a.FinishedAt)) {
				t.Errorf("calls %d and %d did not overlap: %s ends, %s starts", a.Seq, b.Seq, a.FinishedAt, b.StartedAt)
			}
		}
	}
}

func TestRunErrors(t *testing.T) {
	if _, err := runCLI(t, "run", "--format", "anthropic"); err == nil || !strings.Contains(err.Error(), "--stream") {
		t.Errorf("missing --stream: %v", err)
	}
	if _, err := runCLI(t, "run", "--format", "anthropic", "--stream", "/nonexistent/x.sse"); err == nil || !strings.Contains(err.Error(), "x.sse") {
		t.Errorf("missing file: %v", err)
	}
	f := filepath.Join(t.TempDir(), "s.sse")
	_ = os.WriteFile(f, []byte(sleepStream(1, "0")), 0o644)
	if _, err := runCLI(t, "run", "--format", "nope", "--stream", f); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown format: %v", err)
	}
}

func TestDemo(t *testing.T) {
	out, err := runCLI(t, "demo")
	if err != nil {
		t.Fatal(err)
	}
	// Which safe calls overlap depends on timing; that the writing call
	// ran alone does not.
	for _, want := range []string{"Timeline", "Bash(sleep 0.4 && ls -la)", "alone", "turn_done: 6 results", "TODO: scale out executors", "built"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	// It ends with both turns' completion, measured: the streamed one first.
	m := regexp.MustCompile(`Turn complete \(turn_done received, 0 = first byte of the stream\): streaming execution at (\d+)ms, wait-for-end at (\d+)ms \(.*measured\)\.\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("demo output does not end with the wait-for-end comparison:\n%s", out)
	}
	if s, _ := strconv.Atoi(m[1]); s <= 0 {
		t.Errorf("streaming turn complete at %sms", m[1])
	}
}

// TestRunProgress: --progress adds progress lines, in completion order,
// before turn_done.
func TestRunProgress(t *testing.T) {
	f := filepath.Join(t.TempDir(), "two.sse")
	if err := os.WriteFile(f, []byte(sleepStream(2, "0.2")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "run", "--format", "anthropic", "--stream", f, "--progress", "--workdir", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	progress := 0
	for _, line := range lines[:len(lines)-1] {
		var p localrun.ProgressLine
		if json.Unmarshal([]byte(line), &p) == nil && p.Progress {
			progress++
			if !strings.Contains(p.Text, "Bash(sleep 0.2 && echo") {
				t.Errorf("progress text %q", p.Text)
			}
		}
	}
	if progress != 2 {
		t.Errorf("%d progress lines, want 2:\n%s", progress, out)
	}
	if !strings.Contains(lines[len(lines)-1], `"turn_done":true`) {
		t.Errorf("last line: %s", lines[len(lines)-1])
	}
}

// TestRunConfig: a config file's whole-tool deny rule removes the tool from
// the pool, and its per-call rules refuse a call.
func TestRunConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolwire.json")
	if err := os.WriteFile(cfg, []byte(`{"deny": ["Write"], "permissions": {"deny": ["Bash(rm:*)"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "s.sse")
	stream := toolStream([2]string{"Write", `{"file_path":"x","content":"y"}`})
	stream2 := toolStream([2]string{"Bash", `{"command":"echo hi && rm -rf nothing"}`})
	for i, s := range []string{stream, stream2} {
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := runCLI(t, "run", "--config", cfg, "--format", "anthropic", "--stream", f, "--workdir", dir)
		if err != nil {
			t.Fatal(err)
		}
		o := parseLines(t, out)
		want := []string{"No such tool available: Write", "the rule Bash(rm:*) matches"}[i]
		if !o.results[0].IsError || !strings.Contains(o.results[0].Content, want) {
			t.Errorf("call %d: %q, want %q", i, o.results[0].Content, want)
		}
	}
	if _, err := runCLI(t, "run", "--config", filepath.Join(dir, "missing.json"), "--format", "anthropic", "--stream", f); err == nil {
		t.Error("a missing config file was accepted")
	}
}

// TestRunArgumentOverMaxPayload: a 9 MiB argument is over the embedded
// server's max_payload. run fails at once with the server's reason, naming
// the call, and the turn still ends: the other calls run, the big one gets
// an error result, and turn_done is printed.
func TestRunArgumentOverMaxPayload(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "big.sse")
	stream := toolStream(
		[2]string{"Bash", `{"command":"echo before"}`},
		[2]string{"Bash", `{"command":"echo ` + strings.Repeat("x", 9<<20) + `"}`},
		[2]string{"Bash", `{"command":"echo after"}`},
	)
	if err := os.WriteFile(f, []byte(stream), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := runCLI(t, "run", "--format", "anthropic", "--stream", f, "--workdir", dir, "--timeout", "90s")
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("run took %v", took)
	}
	if err == nil {
		t.Fatal("run succeeded")
	}
	for _, want := range []string{"call 1 (toolu_t_1, Bash)", "over the server's max_payload of 8388608 bytes", "maximum payload exceeded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	o := parseLines(t, out)
	if len(o.results) != 3 || o.done.Calls != 3 {
		t.Fatalf("%d results, turn_done calls %d; want 3\n%.2000s", len(o.results), o.done.Calls, out)
	}
	if o.results[0].Content != "before" || o.results[2].Content != "after" {
		t.Errorf("the other calls: %q, %q", o.results[0].Content, o.results[2].Content)
	}
	if r := o.results[1]; !r.IsError || !strings.Contains(r.Content, "too large to send") || !strings.Contains(r.Content, "max_payload of 8388608 bytes") {
		t.Errorf("the big call's result: %+v", r)
	}
}

// TestRunUnsendableCallStopsAtOnce: a call that cannot be sent even as its
// stand-in (its name alone is over max_payload) leaves a turn that cannot
// end; run says so at once instead of waiting for its timeout.
func TestRunUnsendableCallStopsAtOnce(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "name.sse")
	if err := os.WriteFile(f, []byte(toolStream([2]string{strings.Repeat("B", 9<<20), `{}`})), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := runCLI(t, "run", "--format", "anthropic", "--stream", f, "--workdir", dir, "--timeout", "90s")
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("run took %v", took)
	}
	if err == nil || !strings.Contains(err.Error(), "not submitted") || !strings.Contains(err.Error(), "stand-in was not sent") || strings.Contains(err.Error(), "deadline") {
		t.Errorf("error %v", err)
	}
	if len(err.Error()) > 2000 {
		t.Errorf("the error repeats the name: %d bytes", len(err.Error()))
	}
	if strings.Contains(out, "turn_done") {
		t.Errorf("turn_done printed for a turn that cannot end: %.500s", out)
	}
}
