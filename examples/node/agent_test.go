// The Node example, run as written against a real served pipeline and API
// (when node is on PATH).
package node_test

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

func TestAgentExample(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the Node example needs it to run")
	}
	srv := testenv.Server(t)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, builtin.Tools()...), Executors: 2, WorkDir: t.TempDir()})
	base := testenv.API(t, srv, httpapi.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "agent.mjs", "--api", base).CombinedOutput()
	if err != nil {
		t.Fatalf("agent.mjs: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"result 0 toolu_ex_01: first", "result 1 toolu_ex_02: second", "result 2 toolu_ex_03: third"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q missing from:\n%s", want, text)
		}
	}
	var msg struct {
		Content []struct {
			ToolUseID string `json:"tool_use_id"`
			Content   string `json:"content"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(text[strings.Index(text, "{"):]), &msg); err != nil || len(msg.Content) != 3 || msg.Content[2].ToolUseID != "toolu_ex_03" {
		t.Errorf("the tool_result message: %v\n%s", err, text)
	}
}
