package embedded_test

import (
	"context"
	"fmt"
	"os"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/embedded"
)

// A server in a temporary directory, without a TCP listener: clients of the
// same process connect through a pipe. JetStream is on, with the explicit
// limits of Options.
func Example() {
	dir, err := os.MkdirTemp("", "toolwire-embedded-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	srv, err := embedded.Start(embedded.Options{StoreDir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Shutdown() // deferred calls run last-in first-out: the connection drains first

	nc, err := srv.Connect("example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Drain()

	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Println(err)
		return
	}
	// AccountInfo fails with jetstream.ErrJetStreamNotEnabled on a server
	// without JetStream.
	if _, err := js.AccountInfo(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("JetStream enabled")
	fmt.Println("max payload", nc.MaxPayload() == embedded.DefaultMaxPayload)
	fmt.Printf("TCP listener: %q\n", srv.ClientURL())
	// Output:
	// JetStream enabled
	// max payload true
	// TCP listener: ""
}
