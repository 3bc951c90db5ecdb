package reorder_test

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/reorder"
	"github.com/toolwire/toolwire/subjects"
)

// A reorder instance in a process of its own, joining a deployment whose
// streams exist. The out subject itself is the cursor and a result is
// acknowledged only once the cursor has passed it, so any number of
// instances may run and one that stops loses nothing. pipeline.Start (Reorders) does the same for a
// process that runs several stages; this example is compiled, not run, as
// it needs a running deployment.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	nc, err := nats.Connect("nats://127.0.0.1:4222", nats.Name("reorder"))
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Drain()
	r, err := reorder.New(ctx, nc, reorder.Config{Space: subjects.Default()})
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Run(ctx); err != nil { // until Ctrl-C
		log.Fatal(err)
	}
}
