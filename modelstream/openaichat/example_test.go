package openaichat_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/openaichat"
)

// Two parallel calls whose argument fragments interleave, as servers in
// front of vLLM send them. Chat Completions has no per-call stop event: a
// call is complete when its arguments' JSON value closes, so the first is
// reported at the third event (At, the byte just past the event that
// completed it), before the second call's last fragment has come.
func Example() {
	const stream = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"Grep","arguments":""}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"Glob","arguments":"{\"pattern\":"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pattern\":\"TODO\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"\"*.md\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`
	h := modelstream.HandlerFuncs{
		OnCall: func(_ context.Context, c modelstream.Call) error {
			fmt.Printf("call %d %s %s %s at byte %d\n", c.Seq, c.ID, c.Name, c.Input, c.At)
			return nil
		},
		OnEnd: func(_ context.Context, e modelstream.End) error {
			fmt.Printf("end: %d calls, stop reason %s\n", e.Calls, e.StopReason)
			return nil
		},
	}
	if err := openaichat.New().Parse(context.Background(), strings.NewReader(stream), h); err != nil {
		fmt.Println(err)
	}
	// Output:
	// call 0 call_a Grep {"pattern":"TODO"} at byte 656
	// call 1 call_b Glob {"pattern":"*.md"} at byte 835
	// end: 2 calls, stop reason tool_calls
}
