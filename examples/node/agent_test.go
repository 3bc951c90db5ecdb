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
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/builtin"
)

func TestAgentExample(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the Node example needs it to run")
	}
	srv := testenv.Server(t)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, builtin.Tools()...), Executors: 2, WorkDir: t.TempDir()})
	api, err := httpapi.New(httpapi.Config{Conn: testenv.Conn(t, srv, "api"), Space: subjects.Default()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := httpapi.Listen("127.0.0.1:0", api)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "agent.mjs", "--api", "http://"+ln.Addr()).CombinedOutput()
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
