package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
)

// wordCount is the remote pool's own tool.
var wordCount = tool.MustBuild(tool.Definition{
	Name:        "WordCount",
	Description: "Counts the words of a text.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	Call: func(_ context.Context, input json.RawMessage, _ tool.TurnContext, _ tool.Progress) (tool.Result, error) {
		var in struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(input, &in); err != nil {
			return tool.Result{Content: err.Error(), IsError: true}, nil
		}
		return tool.Result{Content: fmt.Sprint(len(strings.Fields(in.Text)), " words")}, nil
	},
	ConcurrencySafe: tool.Always,
	ReadOnly:        tool.Always,
})

// A remote pool: a program of its own links the executor package, registers
// its own tools and joins a running deployment under a pool name. Its
// workers advertise the tools in the TW_TOOLS bucket while they run, and
// the deployment's router sends those tools' calls to the pool, while the
// built-in tools keep running in the default pool. Here the deployment and
// the pool share one process and an embedded server; examples/remotepool is
// the same pool as a separate program.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "toolwire-remotepool-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := embedded.Start(embedded.Options{StoreDir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Shutdown()
	space := subjects.Default()

	// The deployment, as `toolwire serve` runs it: every stage, and the
	// built-in tools in the default pool.
	builtins, err := tool.NewRegistry(builtin.Tools()...)
	if err != nil {
		log.Fatal(err)
	}
	p, err := pipeline.Start(ctx, srv.Connect, pipeline.Config{Space: space, Tools: builtins})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Stop()

	// The remote pool, on a connection of its own (nats.Connect to the
	// deployment's server, in a program of its own).
	poolConn, err := srv.Connect("remotepool")
	if err != nil {
		log.Fatal(err)
	}
	defer poolConn.Close()
	tools, err := tool.NewRegistry(wordCount)
	if err != nil {
		log.Fatal(err)
	}
	e, err := executor.New(ctx, poolConn, executor.Config{Space: space, Pool: "examples", Tools: tools, WorkerID: "wordcount-1"})
	if err != nil {
		log.Fatal(err)
	}
	poolCtx, stopPool := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- e.Run(poolCtx) }()
	defer func() {
		// Run withdraws the advertisements and finishes its calls first.
		stopPool()
		if err := <-stopped; err != nil {
			log.Print(err)
		}
	}()

	// A call sent before the pool has advertised its tool would be
	// answered "No such tool", so wait for the advertisement.
	agentConn, err := srv.Connect("agent")
	if err != nil {
		log.Fatal(err)
	}
	defer agentConn.Close()
	js, err := jetstream.New(agentConn)
	if err != nil {
		log.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, space.ToolsBucket())
	if err != nil {
		log.Fatal(err)
	}
	w, err := kv.Watch(ctx, space.ToolKey("examples", wordCount.Name(), e.WorkerID()))
	if err != nil {
		log.Fatal(err)
	}
	for advertised := false; !advertised; {
		select {
		case entry := <-w.Updates():
			advertised = entry != nil && entry.Operation() == jetstream.KeyValuePut
		case <-ctx.Done():
			log.Fatal("the pool never advertised its tool")
		}
	}
	_ = w.Stop()

	cl, err := client.New(agentConn, client.Config{Space: space})
	if err != nil {
		log.Fatal(err)
	}
	turn := client.NewTurnID()
	err = cl.SubmitCalls(ctx, turn, []client.Call{
		{ID: "call_1", Name: "WordCount", Input: json.RawMessage(`{"text":"one two three"}`)},
		{ID: "call_2", Name: "Bash", Input: json.RawMessage(`{"command":"echo from the default pool"}`)},
	}, client.TurnOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for d, err := range cl.Results(ctx, turn) {
		if err != nil {
			log.Fatal(err)
		}
		if d.Done != nil {
			break
		}
		r := d.Result
		fmt.Printf("%s: %s (ran in the remote pool: %v)\n", r.Name, r.Content, r.Worker == e.WorkerID())
	}
	// Output:
	// WordCount: 3 words (ran in the remote pool: true)
	// Bash: from the default pool (ran in the remote pool: false)
}
