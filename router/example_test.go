package router_test

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/router"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
)

// A router instance in a process of its own, joining a deployment whose
// streams exist. Any number of routers may run at once: they share one
// durable consumer. Tools are the tools of the default pool, the same the
// default pool's executors host; tools of remote pools are routed by their
// advertisements and need not be listed. pipeline.Start (Routers) does the
// same for a process that runs several stages; this example is compiled,
// not run, as it needs a running deployment.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	nc, err := nats.Connect("nats://127.0.0.1:4222", nats.Name("router"))
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Drain()
	tools, err := tool.NewRegistry(builtin.Tools()...)
	if err != nil {
		log.Fatal(err)
	}
	r, err := router.New(ctx, nc, router.Config{Space: subjects.Default(), Tools: tools})
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Run(ctx); err != nil { // until Ctrl-C
		log.Fatal(err)
	}
}
