package pipeline_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/modelstream/anthropic"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
)

// modelStream stands for a model's response body: an Anthropic Messages
// stream with two tool_use blocks.
const modelStream = `event: message_start
data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"stop_reason":null}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01","name":"Bash","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"echo hello from Bash\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_02","name":"Read","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"file_path\":\"notes.txt\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use"}}

event: message_stop
data: {"type":"message_stop"}

`

// Everything in one process: an embedded server, every stage with the
// built-in tools, and a client that submits a model's stream and reads the
// results. Each call is published the moment its block is complete, the
// two calls (both read-only, so safe together) run side by side, and the
// results arrive in call order, then the turn's end.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "toolwire-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte("one note\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	srv, err := embedded.Start(embedded.Options{StoreDir: filepath.Join(dir, "store")})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown()
	reg, err := tool.NewRegistry(builtin.Tools()...)
	if err != nil {
		log.Fatal(err)
	}
	p, err := pipeline.Start(ctx, srv.Connect, pipeline.Config{Space: subjects.Default(), Tools: reg, Executors: 2, WorkDir: work})
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
	go func() {
		// In an agent the reader is the model API's response body.
		if _, err := cl.SubmitStream(ctx, turn, anthropic.New(), strings.NewReader(modelStream), client.TurnOptions{}); err != nil {
			log.Print(err)
		}
	}()
	for d, err := range cl.Results(ctx, turn) {
		if err != nil {
			log.Fatal(err)
		}
		if d.Done != nil {
			fmt.Println("turn done:", d.Done.Results, "results")
			break
		}
		r := d.Result
		fmt.Printf("%d %s %s error=%v %q\n", r.Seq, r.ToolUseID, r.Name, r.IsError, r.Content)
	}
	// Output:
	// 0 toolu_01 Bash error=false "hello from Bash"
	// 1 toolu_02 Read error=false "     1\tone note"
	// turn done: 2 results
}
