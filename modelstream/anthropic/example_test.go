package anthropic_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/anthropic"
)

// stream is a short Messages stream: a text block, then two tool_use
// blocks, the second's arguments split over two deltas as the API sends
// them.
const stream = `event: message_start
data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"stop_reason":null}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Looking at the repository."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"Bash","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"git status\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_02","name":"Read","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"file_path\":"}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":" \"README.md\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use"}}

event: message_stop
data: {"type":"message_stop"}

`

// Each call is reported at its block's content_block_stop, with its
// arguments joined and compacted; the text block is not a call. End comes
// once, after the last call.
func Example() {
	h := modelstream.HandlerFuncs{
		OnCall: func(_ context.Context, c modelstream.Call) error {
			fmt.Printf("call %d %s %s %s complete=%v\n", c.Seq, c.ID, c.Name, c.Input, c.Complete)
			return nil
		},
		OnEnd: func(_ context.Context, e modelstream.End) error {
			fmt.Printf("end: %d calls, stop reason %s, error %q\n", e.Calls, e.StopReason, e.Err)
			return nil
		},
	}
	if err := anthropic.New().Parse(context.Background(), strings.NewReader(stream), h); err != nil {
		fmt.Println(err)
	}
	// Output:
	// call 0 toolu_01 Bash {"command":"git status"} complete=true
	// call 1 toolu_02 Read {"file_path":"README.md"} complete=true
	// end: 2 calls, stop reason tool_use, error ""
}
