package openairesponses_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/openairesponses"
)

// A Responses stream with one function_call item: the name comes with
// output_item.added, the arguments are complete at
// function_call_arguments.done, and the call's ID is its call_id, the id a
// function_call_output must cite.
func Example() {
	const stream = `event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_1","name":"Read"}}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":2,"item_id":"fc_1","output_index":0,"delta":"{\"file_path\":"}

event: response.function_call_arguments.delta
data: {"type":"response.function_call_arguments.delta","sequence_number":3,"item_id":"fc_1","output_index":0,"delta":"\"go.mod\"}"}

event: response.function_call_arguments.done
data: {"type":"response.function_call_arguments.done","sequence_number":4,"item_id":"fc_1","output_index":0,"arguments":"{\"file_path\":\"go.mod\"}"}

event: response.output_item.done
data: {"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"file_path\":\"go.mod\"}","call_id":"call_1","name":"Read"}}

event: response.completed
data: {"type":"response.completed","sequence_number":6,"response":{"id":"resp_1","object":"response","status":"completed","output":[{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"file_path\":\"go.mod\"}","call_id":"call_1","name":"Read"}]}}

`
	h := modelstream.HandlerFuncs{
		OnCall: func(_ context.Context, c modelstream.Call) error {
			fmt.Printf("call %d %s %s %s\n", c.Seq, c.ID, c.Name, c.Input)
			return nil
		},
		OnEnd: func(_ context.Context, e modelstream.End) error {
			fmt.Printf("end: %d calls, stop reason %s\n", e.Calls, e.StopReason)
			return nil
		},
	}
	if err := openairesponses.New().Parse(context.Background(), strings.NewReader(stream), h); err != nil {
		fmt.Println(err)
	}
	// Output:
	// call 0 call_1 Read {"file_path":"go.mod"}
	// end: 1 calls, stop reason completed
}
