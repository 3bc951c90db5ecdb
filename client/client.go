// Package client is what an agent or a model adapter embeds: submit a
// model's stream (or a list of calls) for a turn, and read the turn's
// results in call order.
//
// The events a method publishes carry the OpenTelemetry span context of
// the ctx it is given (the CloudEvents traceparent extension), so that the
// pipeline's spans of the turn continue the caller's trace
// (docs/operations.md, Tracing).
package client

import (
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/toolwire/toolwire/internal/jserr"
	"github.com/toolwire/toolwire/subjects"
)

// Config configures a client.
type Config struct {
	// Space is the name space of the pipeline's streams and subjects; it
	// must be the one the stages run with (subjects.Default unless
	// configured).
	Space subjects.Space
	// Tenant is the tenant of every turn (default subjects.DefaultTenant).
	Tenant string
	// Source is the ce-source of the events it publishes.
	Source string
}

// Client submits turns and reads their results. It is safe for concurrent
// use: one client can follow many turns at once.
type Client struct {
	cfg Config
	nc  *nats.Conn
	js  jetstream.JetStream
}

// New returns a client on nc. The streams must exist: a router, executor
// or reorder stage creates them when it starts, as do pipeline.Start and
// `toolwire serve`.
func New(nc *nats.Conn, cfg Config) (*Client, error) {
	if err := cfg.Space.Check(); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if cfg.Tenant == "" {
		cfg.Tenant = subjects.DefaultTenant
	}
	if err := subjects.CheckToken("tenant", cfg.Tenant); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	if cfg.Source == "" {
		cfg.Source = "/toolwire/client"
	}
	// An ack that never comes (the stream's leader died with the publish
	// in flight) fails the publish after a bound, and it is sent again.
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(jserr.RequestTimeout))
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return &Client{cfg: cfg, nc: nc, js: js}, nil
}

// NewTurnID returns a fresh turn id: unique without coordination, and a
// valid subject token, as every method that takes a turn id requires.
func NewTurnID() string { return "turn_" + nuid.Next() }

// checkTurn refuses a turn id that cannot be one subject token, before
// anything is sent or subscribed: "a.b" would publish where no stream
// listens, and "*" or ">" would read or steer every turn of the tenant.
// op names the method, so that the error says what was refused and why.
func checkTurn(op, turn string) error {
	if err := subjects.CheckToken("turn", turn); err != nil {
		return fmt.Errorf("client: %s: %w", op, err)
	}
	return nil
}
