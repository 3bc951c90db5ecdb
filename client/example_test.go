package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// upper is a tool of the example's own: it upper-cases a text, slowly when
// asked, and only reads, so its calls may run side by side.
var upper = tool.MustBuild(tool.Definition{
	Name:        "Upper",
	Description: "Upper-cases text.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"ms":{"type":"integer"}},"required":["text"],"additionalProperties":false}`),
	Call: func(ctx context.Context, input json.RawMessage, _ tool.TurnContext, _ tool.Progress) (tool.Result, error) {
		var in struct {
			Text string `json:"text"`
			MS   int    `json:"ms"`
		}
		if err := json.Unmarshal(input, &in); err != nil {
			return tool.Result{Content: err.Error(), IsError: true}, nil
		}
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
		return tool.Result{Content: strings.ToUpper(in.Text)}, nil
	},
	ConcurrencySafe: tool.Always,
	ReadOnly:        tool.Always,
})

// A turn submitted as a list of calls, for an agent that has parsed the
// model's response itself. The first call is the slowest, yet the results
// come in call order; a call of an unknown tool and one whose input breaks
// the schema are answered with an error result and never run; the turn ends
// with every call counted.
func ExampleClient_SubmitCalls() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "toolwire-client-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := embedded.Start(embedded.Options{StoreDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown()
	reg, err := tool.NewRegistry(upper)
	if err != nil {
		log.Fatal(err)
	}
	p, err := pipeline.Start(ctx, srv.Connect, pipeline.Config{Space: subjects.Default(), Tools: reg})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Stop()

	nc, err := srv.Connect("agent")
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	cl, err := client.New(nc, client.Config{Space: subjects.Default()})
	if err != nil {
		log.Fatal(err)
	}
	turn := client.NewTurnID()
	calls := []client.Call{
		{ID: "call_1", Name: "Upper", Input: json.RawMessage(`{"text":"first","ms":200}`)},
		{ID: "call_2", Name: "Upper", Input: json.RawMessage(`{"text":"second"}`)},
		{ID: "call_3", Name: "Lower", Input: json.RawMessage(`{"text":"third"}`)},
		{ID: "call_4", Name: "Upper", Input: json.RawMessage(`{"txt":"fourth"}`)},
	}
	if err := cl.SubmitCalls(ctx, turn, calls, client.TurnOptions{}); err != nil {
		log.Fatal(err)
	}
	// Results may be read before, during or after the turn runs.
	for d, err := range cl.Results(ctx, turn) {
		if err != nil {
			log.Fatal(err)
		}
		if d.Done != nil {
			fmt.Println("turn done:", d.Done.Results, "results")
			break
		}
		fmt.Printf("%d %s error=%v %s\n", d.Result.Seq, d.Result.ToolUseID, d.Result.IsError, d.Result.Content)
	}
	// Output:
	// 0 call_1 error=false FIRST
	// 1 call_2 error=false SECOND
	// 2 call_3 error=true <tool_use_error>No such tool available: Lower</tool_use_error>
	// 3 call_4 error=true <tool_use_error>input is invalid:
	// - /: missing required property "text"
	// - /: unexpected property "txt" (not in the schema)</tool_use_error>
	// turn done: 4 results
}
