// The Python example, run as written against a real served pipeline and
// API (when python3 is on PATH).
package python_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/httpapi"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool/builtin"
)

// TestAgentExample: agent.py uploads its recorded stream, reads the
// results as server-sent events and prints the tool_result message with
// the three Bash outputs in call order.
func TestAgentExample(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: the Python example needs it to run")
	}
	srv := testenv.Server(t)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, builtin.Tools()...), Executors: 2, WorkDir: t.TempDir()})
	base := testenv.API(t, srv, httpapi.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "agent.py", "--api", base)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("agent.py: %v\n%s", err, out)
	}
	text := string(out)
	for i, want := range []string{"result 0 toolu_ex_01: first", "result 1 toolu_ex_02: second", "result 2 toolu_ex_03: third"} {
		if !strings.Contains(text, want) {
			t.Errorf("line %d %q missing from:\n%s", i, want, text)
		}
	}
	var msg struct {
		Role    string `json:"role"`
		Content []struct {
			Type      string `json:"type"`
			ToolUseID string `json:"tool_use_id"`
			Content   string `json:"content"`
			IsError   bool   `json:"is_error"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(text[strings.Index(text, "{"):]), &msg); err != nil {
		t.Fatalf("the tool_result message: %v\n%s", err, text)
	}
	if msg.Role != "user" || len(msg.Content) != 3 {
		t.Fatalf("message %+v", msg)
	}
	for i, c := range msg.Content {
		if c.Type != "tool_result" || c.IsError || c.ToolUseID != []string{"toolu_ex_01", "toolu_ex_02", "toolu_ex_03"}[i] || !strings.HasSuffix(strings.TrimSpace(c.Content), []string{"first", "second", "third"}[i]) {
			t.Errorf("block %d: %+v", i, c)
		}
	}
}
