package modelstream_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/formats"
)

// A stream cut off by max_tokens inside its second call: the first call is
// complete and runnable; the second is still reported, so that the model can
// be told it was not run, with Complete false, the reason and the text that
// came. The stream itself ended well (End.Err is empty, the stop reason says
// why it ended); a broken stream would be reported in End.Err, not as an
// error from Parse.
func Example() {
	const stream = `event: message_start
data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"stop_reason":null}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01","name":"Glob","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"pattern\":\"**/*.go\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_02","name":"Write","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"file_path\":\"notes.md\",\"content\":\"The first"}}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"}}

event: message_stop
data: {"type":"message_stop"}

`
	// Any format's parser satisfies the same contract.
	p, err := formats.Parser("anthropic")
	if err != nil {
		fmt.Println(err)
		return
	}
	var calls []modelstream.Call
	var end modelstream.End
	h := modelstream.HandlerFuncs{
		OnCall: func(_ context.Context, c modelstream.Call) error { calls = append(calls, c); return nil },
		OnEnd:  func(_ context.Context, e modelstream.End) error { end = e; return nil },
	}
	if err := p.Parse(context.Background(), strings.NewReader(stream), h); err != nil {
		fmt.Println("parse:", err) // only a handler, context or read failure
		return
	}
	for _, c := range calls {
		if c.Complete {
			fmt.Printf("%d %s runnable: %s\n", c.Seq, c.Name, c.Input)
		} else {
			fmt.Printf("%d %s not runnable (%s), raw %q\n", c.Seq, c.Name, c.Err, c.RawInput)
		}
	}
	fmt.Printf("end: calls=%d stop=%s err=%q\n", end.Calls, end.StopReason, end.Err)
	// Output:
	// 0 Glob runnable: {"pattern":"**/*.go"}
	// 1 Write not runnable (tool call incomplete: the stream ended before the tool_use block was complete (stop_reason max_tokens)), raw "{\"file_path\":\"notes.md\",\"content\":\"The first"
	// end: calls=2 stop=max_tokens err=""
}
