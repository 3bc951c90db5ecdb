// Package apimember starts, for a test, a real NATS server without
// JetStream in which the test plays the JetStream API's members itself —
// ones that stay silent, say, as a stream's members do while they elect a
// leader. It imports nothing of the pipeline, so the stages' own tests can
// use it.
package apimember

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Start starts the server, subscribes each handler to its subject
// (wildcards allowed), and returns a JetStream context on a connection to
// it; all end with the test.
func Start(t testing.TB, handlers map[string]nats.MsgHandler) jetstream.JetStream {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("apimember: server not ready")
	}
	t.Cleanup(ns.Shutdown)
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	for subject, h := range handlers {
		if _, err := nc.Subscribe(subject, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
