// Package testenv starts what the tests of several packages need: a real
// embedded JetStream server in a test's temporary directory, a pipeline on
// it, and a client.
package testenv

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// Server starts an embedded server that the test shuts down at its end.
func Server(t testing.TB) *embedded.Server {
	t.Helper()
	return ServerWith(t, embedded.Options{})
}

// ServerWith is Server with options of the test's own (a small MaxPayload,
// say); the store directory and the test's resource limits fill what o
// leaves unset.
func ServerWith(t testing.TB, o embedded.Options) *embedded.Server {
	t.Helper()
	if o.StoreDir == "" {
		o.StoreDir = t.TempDir()
	}
	if o.MaxMemory == 0 {
		o.MaxMemory = 256 << 20
	}
	if o.MaxStore == 0 {
		o.MaxStore = 2 << 30
	}
	srv, err := embedded.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// Conn opens a connection that the test closes at its end.
func Conn(t testing.TB, srv *embedded.Server, name string) *nats.Conn {
	t.Helper()
	nc, err := srv.Connect(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Pipeline starts the stages on srv; they stop at the test's end.
func Pipeline(t testing.TB, srv *embedded.Server, cfg pipeline.Config) *pipeline.Pipeline {
	t.Helper()
	if cfg.Space == (subjects.Space{}) {
		cfg.Space = subjects.Default()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := pipeline.Start(ctx, srv.Connect, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Errorf("pipeline stop: %v", err)
		}
	})
	return p
}

// Client returns a client on its own connection.
func Client(t testing.TB, srv *embedded.Server) *client.Client {
	t.Helper()
	c, err := client.New(Conn(t, srv, "test-client"), client.Config{Space: subjects.Default()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Registry builds a registry or fails the test.
func Registry(t testing.TB, tools ...*tool.Tool) *tool.Registry {
	t.Helper()
	r, err := tool.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
