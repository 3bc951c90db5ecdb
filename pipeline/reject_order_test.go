package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool/builtin"
)

// TestRejectedCallCancelsNothingBeforeIt is the seven-call turn a new user
// ran: five real Bash calls, then a call of an unknown tool and a Bash call
// the router refuses (no command). The refused Bash is an unsafe call that
// fails at its place, once every earlier call has finished, so the calls
// the model wrote before it run to their end — c.txt is written and read —
// and the refusal cancels nothing (there is no later call).
func TestRejectedCallCancelsNothingBeforeIt(t *testing.T) {
	srv := testenv.Server(t)
	dir := t.TempDir()
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, builtin.Tools()...), WorkDir: dir, Executors: 2})
	cl := testenv.Client(t, srv)
	res := runCalls(t, cl, "seven", []client.Call{
		call("a", "Bash", `{"command":"sleep 0.6 && echo A"}`),
		call("b", "Bash", `{"command":"sleep 0.6 && echo B"}`),
		call("c", "Bash", `{"command":"sleep 0.3 && echo C > c.txt && echo C"}`),
		call("d", "Bash", `{"command":"cat c.txt"}`),
		call("e", "Bash", `{"command":"ls -la"}`),
		call("f", "NoSuchTool", `{}`),
		call("g", "Bash", `{"cmd":"ls"}`),
	})
	if len(res) != 7 {
		t.Fatalf("%d results for 7 calls", len(res))
	}
	for i, want := range []string{"A", "B", "C", "C", "c.txt"} {
		if res[i].IsError || !strings.Contains(res[i].Content, want) {
			t.Errorf("seq %d: want a normal result with %q, got %+v", i, want, res[i])
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "c.txt")); err != nil {
		t.Errorf("c.txt was not written: %v", err)
	}
	if !res[5].IsError || !strings.Contains(res[5].Content, "No such tool available: NoSuchTool") {
		t.Errorf("seq 5: %+v", res[5])
	}
	if !res[6].IsError || !strings.Contains(res[6].Content, "command") {
		t.Errorf("seq 6: want the input error naming the missing command, got %+v", res[6])
	}
}

// TestRejectedCallCancelsLaterCalls: a refused Bash between runnable calls
// fails at its place: the calls before it run, the calls after it get the
// sibling text naming the tool (its input has no command) and never run.
func TestRejectedCallCancelsLaterCalls(t *testing.T) {
	srv := testenv.Server(t)
	dir := t.TempDir()
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, builtin.Tools()...), WorkDir: dir})
	cl := testenv.Client(t, srv)
	res := runCalls(t, cl, "between", []client.Call{
		call("a", "Bash", `{"command":"sleep 0.3 && touch before"}`),
		call("b", "Bash", `{"cmd":"ls"}`),
		call("c", "Bash", `{"command":"touch after"}`),
		call("d", "Bash", `{"command":"ls"}`),
	})
	if res[0].IsError {
		t.Errorf("seq 0: %+v", res[0])
	}
	if _, err := os.Stat(filepath.Join(dir, "before")); err != nil {
		t.Errorf("the call before the refused one did not run: %v", err)
	}
	for _, r := range res[2:] {
		if !strings.Contains(r.Content, "Cancelled: parallel tool call Bash errored") {
			t.Errorf("seq %d: want the sibling text naming Bash, got %+v", r.Seq, r)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "after")); err == nil {
		t.Error("a call after the refused one ran")
	}
}
