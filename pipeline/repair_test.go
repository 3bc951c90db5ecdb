package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
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

// anthropicStream is a Messages stream of tool_use blocks, each with its
// argument text as the model wrote it, every block closed.
func anthropicStream(args ...string) string {
	var b strings.Builder
	ev := func(kind, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", kind, data) }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_r","type":"message","role":"assistant","content":[],"stop_reason":null}}`)
	for i, a := range args {
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"toolu_%d","name":"Bash","input":{}}}`, i, i))
		partial, _ := json.Marshal(a)
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, partial))
		ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
	}
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return b.String()
}

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
	stream := anthropicStream(`{"command": "echo repaired > r.txt && echo repaired",`, `{"command": oops}`, `{"command": "touch after"}`)
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
