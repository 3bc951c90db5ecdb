package hermes_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/hermes"
)

// Hermes/Qwen text carries calls as <tool_call> blocks in the model's own
// output. The parser reads the text itself (not SSE): text outside the tags
// and a <tool_call> inside <think> are not calls, and <|im_end|> ends the
// turn.
func Example() {
	const text = `<think>Maybe <tool_call>{"name":"Bash","arguments":{"command":"rm -rf /"}}</tool_call>? No.</think>` +
		`Let me check.` + "\n" +
		`<tool_call>` + "\n" + `{"name": "Bash", "arguments": {"command": "go version"}}` + "\n" + `</tool_call>` + "\n" +
		`<tool_call>` + "\n" + `{"arguments": {"file_path": "go.mod"}, "name": "Read"}` + "\n" + `</tool_call><|im_end|>`
	h := modelstream.HandlerFuncs{
		OnCall: func(_ context.Context, c modelstream.Call) error {
			fmt.Printf("call %d %s %s\n", c.Seq, c.Name, c.Input)
			return nil
		},
		OnEnd: func(_ context.Context, e modelstream.End) error {
			fmt.Printf("end: %d calls, stop reason %s\n", e.Calls, e.StopReason)
			return nil
		},
	}
	if err := hermes.New().Parse(context.Background(), strings.NewReader(text), h); err != nil {
		fmt.Println(err)
	}
	// Output:
	// call 0 Bash {"command":"go version"}
	// call 1 Read {"file_path":"go.mod"}
	// end: 2 calls, stop reason im_end
}
