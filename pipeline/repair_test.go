package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/modelstream/anthropic"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/tool/builtin"
)

// TestCompletedBlockRepaired: a block that ended with a trailing comma and
// no closers is repaired by the router (the repair rule allows it for a
// completed block) and runs; a completed block whose text cannot be
// repaired is the call's invalid input — its failure, so Bash cancels the
// call after it — and is never reported as incomplete.
func TestCompletedBlockRepaired(t *testing.T) {
	srv := testenv.Server(t)
	dir := t.TempDir()
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, builtin.Tools()...), WorkDir: dir})
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream := testenv.AnthropicStream("msg_r",
		testenv.ToolBlock{ID: "toolu_0", Name: "Bash", Args: `{"command": "echo repaired > r.txt && echo repaired",`},
		testenv.ToolBlock{ID: "toolu_1", Name: "Bash", Args: `{"command": oops}`},
		testenv.ToolBlock{ID: "toolu_2", Name: "Bash", Args: `{"command": "touch after"}`})
	if _, err := cl.SubmitStream(ctx, "repair", anthropic.New(), strings.NewReader(stream), client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	res, _, err := testenv.ReadTurn(ctx, cl, "repair")
	if err != nil || len(res) != 3 {
		t.Fatalf("%d results: %v", len(res), err)
	}
	if res[0].IsError || strings.TrimSpace(res[0].Content) != "repaired" {
		t.Errorf("seq 0, a repairable block: %+v", res[0])
	}
	if _, err := os.Stat(filepath.Join(dir, "r.txt")); err != nil {
		t.Errorf("the repaired call did not run: %v", err)
	}
	if !res[1].IsError || !strings.Contains(res[1].Content, "Invalid tool arguments") || strings.Contains(res[1].Content, "incomplete") {
		t.Errorf("seq 1, malformed text in a completed block: %+v", res[1])
	}
	if !strings.Contains(res[2].Content, "Cancelled: parallel tool call Bash errored") {
		t.Errorf("seq 2, after the malformed call: %+v", res[2])
	}
	if _, err := os.Stat(filepath.Join(dir, "after")); err == nil {
		t.Error("the call after the malformed one ran")
	}
}
