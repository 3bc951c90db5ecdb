package chunks_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/anthropic"
	"github.com/toolwire/toolwire/modelstream/chunks"
)

// A .chunks.jsonl capture holds one SSE data payload a line. Reader frames
// the lines as the SSE stream they came from, so any parser reads it, and
// FileOffset turns a call's stream offset back into an offset in the file:
// here, the end of the content_block_stop line that completed the call.
func Example() {
	lines := []string{
		`{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"stop_reason":null}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01","name":"Glob","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"pattern\":\"*.go\"}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"}}`,
		`{"type":"message_stop"}`,
	}
	file := strings.Join(lines, "\n") + "\n"
	r := chunks.NewReader(strings.NewReader(file))
	h := modelstream.HandlerFuncs{OnCall: func(_ context.Context, c modelstream.Call) error {
		at := r.FileOffset(c.At)
		fmt.Printf("%s %s completed by file line %d\n", c.Name, c.Input, strings.Count(file[:at], "\n"))
		return nil
	}}
	if err := anthropic.New().Parse(context.Background(), r, h); err != nil {
		fmt.Println(err)
	}
	// Output:
	// Glob {"pattern":"*.go"} completed by file line 4
}
