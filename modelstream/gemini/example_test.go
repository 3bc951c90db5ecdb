package gemini_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/gemini"
)

// Gemini sends each functionCall part whole, so each is a complete call the
// moment its chunk arrives; parallel calls share a chunk here. Without an
// id from the model (Gemini before 3), each call gets an id derived from
// the call, the same for the same stream.
func Example() {
	const stream = `data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"Read","args":{"file_path":"main.go"}}},{"functionCall":{"name":"Grep","args":{"pattern":"func main"}}}]},"finishReason":"STOP","index":0}],"modelVersion":"gemini-2.5-flash"}

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
	if err := gemini.New().Parse(context.Background(), strings.NewReader(stream), h); err != nil {
		fmt.Println(err)
	}
	// Output:
	// call 0 call_gemini_0_5f89bb0894f402ac77ee1d35 Read {"file_path":"main.go"}
	// call 1 call_gemini_1_0c550cbc7bd28fde032bbbd3 Grep {"pattern":"func main"}
	// end: 2 calls, stop reason STOP
}
