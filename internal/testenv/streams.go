package testenv

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ToolBlock is one tool_use block of a made-up model stream: the call's
// id, tool and argument text exactly as the model would write it.
type ToolBlock struct {
	ID, Name, Args string
}

// AnthropicStream is an Anthropic Messages stream (SSE) of the given
// tool_use blocks, each streamed in one delta and closed, ending with stop
// reason tool_use.
func AnthropicStream(msgID string, blocks ...ToolBlock) string {
	var b strings.Builder
	ev := func(kind, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", kind, data) }
	ev("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":%q,"type":"message","role":"assistant","content":[],"stop_reason":null}}`, msgID))
	for i, c := range blocks {
		ev("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, i, c.ID, c.Name))
		partial, _ := json.Marshal(c.Args)
		ev("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, partial))
		ev("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
	}
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use"}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return b.String()
}
