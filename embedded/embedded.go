// Package embedded runs a NATS server with JetStream inside the process, the
// default deployment of toolwire and the broker of every test.
//
// It is a real nats-server (file store, explicit memory and store limits),
// not a mock; clients connect in-process through a pipe, or over TCP when a
// listen address is given.
package embedded

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Default resource limits: explicit, because nats-server's defaults are 75%
// of RAM and all free disk.
const (
	DefaultMaxMemory = 1 << 30
	DefaultMaxStore  = 8 << 30
)

// DefaultMaxPayload is the largest message the server accepts, headers
// included, unless Options.MaxPayload says otherwise: 8 MiB, eight times
// nats-server's own default, so that a model's large but ordinary tool
// arguments fit in one event.
const DefaultMaxPayload = 8 << 20

// ErrNotReady is returned when the server does not become ready in time.
var ErrNotReady = errors.New("embedded: nats server not ready")

// Options configure an embedded server.
type Options struct {
	// StoreDir is where JetStream keeps its files (required; a test passes t.TempDir()).
	StoreDir string
	// Listen is host:port for TCP clients; empty means no TCP listener at all.
	Listen string
	// Name is the server name (default "toolwire").
	Name string
	// MaxMemory and MaxStore bound JetStream (defaults above).
	MaxMemory int64
	MaxStore  int64
	// MaxPayload is the server's max_payload in bytes (default
	// DefaultMaxPayload); a test sets it small to meet the limit cheaply.
	MaxPayload int32
	// ReadyTimeout bounds start-up (default 10 s).
	ReadyTimeout time.Duration
	// Logs turns the server's own logging on (stderr).
	Logs bool
	// Cluster makes the server a member of a NATS cluster (nil: alone).
	Cluster *Cluster
	// Domain is the JetStream domain, for a hub and its leaf nodes (empty:
	// none).
	Domain string
	// ConfigFile, when set, is a nats-server configuration file whose
	// accounts, users, authorization and TLS the server takes (the rest of
	// the options above still apply).
	ConfigFile string
}

// Cluster says how a server joins a NATS cluster. Three servers, each
// listing the others' cluster addresses in Routes, form a JetStream
// cluster; every server needs a Name of its own.
type Cluster struct {
	// Name is the cluster's name, the same on every member.
	Name string
	// Listen is host:port where this server accepts routes from the others.
	Listen string
	// Routes are the other members' cluster URLs (nats://host:port);
	// listing this server's own address too is harmless.
	Routes []string
}

// Server is a running embedded server.
type Server struct {
	ns *server.Server
}

// Start starts a server and waits until it accepts connections with
// JetStream enabled.
func Start(o Options) (*Server, error) {
	if o.StoreDir == "" {
		return nil, errors.New("embedded: StoreDir is required")
	}
	if o.Name == "" {
		o.Name = "toolwire"
	}
	if o.MaxMemory == 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.MaxStore == 0 {
		o.MaxStore = DefaultMaxStore
	}
	if o.MaxPayload == 0 {
		o.MaxPayload = DefaultMaxPayload
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 10 * time.Second
	}
	opts := &server.Options{}
	if o.ConfigFile != "" {
		// The file brings what toolwire has no flags for: accounts, users,
		// TLS. What toolwire sets below (JetStream, the store, the address)
		// is the command line's.
		fo, err := server.ProcessConfigFile(o.ConfigFile)
		if err != nil {
			return nil, fmt.Errorf("embedded: %w", err)
		}
		opts = fo
	}
	opts.ServerName = o.Name
	opts.Host, opts.Port = "127.0.0.1", -1
	opts.DontListen = o.Listen == ""
	opts.JetStream = true
	opts.StoreDir = o.StoreDir
	opts.JetStreamMaxMemory, opts.JetStreamMaxStore = o.MaxMemory, o.MaxStore
	opts.NoLog, opts.Logtime = !o.Logs, o.Logs
	opts.NoSigs = true
	opts.MaxPayload = o.MaxPayload
	// In-process clients share the machine's cores with the server; a
	// client starved for the default 10 s under load must not be cut off
	// as a slow consumer.
	opts.WriteDeadline = time.Minute
	if o.Listen != "" {
		host, port, err := hostPort("listen", o.Listen)
		if err != nil {
			return nil, err
		}
		opts.Host, opts.Port = host, port
	}
	opts.JetStreamDomain = o.Domain
	if o.Cluster != nil {
		if err := o.Cluster.apply(opts); err != nil {
			return nil, err
		}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded: %w", err)
	}
	if o.Logs {
		ns.ConfigureLogger()
	}
	go ns.Start()
	if !ns.ReadyForConnections(o.ReadyTimeout) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("%w after %s (store %s)", ErrNotReady, o.ReadyTimeout, o.StoreDir)
	}
	return &Server{ns: ns}, nil
}

func hostPort(what, addr string) (string, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("embedded: %s address %q: %w", what, addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < -1 || p > 65535 {
		// -1 is nats-server's "any free port".
		return "", 0, fmt.Errorf("embedded: %s address %q: port %q is not a number from -1 (any) to 65535", what, addr, port)
	}
	return host, p, nil
}

func (c *Cluster) apply(opts *server.Options) error {
	if c.Name == "" {
		return errors.New("embedded: a cluster needs a name")
	}
	if c.Listen == "" {
		return errors.New("embedded: a cluster member needs an address to listen for routes on")
	}
	host, port, err := hostPort("cluster listen", c.Listen)
	if err != nil {
		return err
	}
	opts.Cluster = server.ClusterOpts{Name: c.Name, Host: host, Port: port}
	for _, r := range c.Routes {
		u, err := url.Parse(r)
		if err != nil || u.Host == "" {
			return fmt.Errorf("embedded: route %q is not a URL like nats://host:6222", r)
		}
		opts.Routes = append(opts.Routes, u)
	}
	return nil
}

// Connect opens an in-process client connection.
func (s *Server) Connect(name string, opts ...nats.Option) (*nats.Conn, error) {
	opts = append([]nats.Option{nats.InProcessServer(s.ns), nats.Name(name), nats.MaxReconnects(-1)}, opts...)
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return nil, fmt.Errorf("embedded: connect %s: %w", name, err)
	}
	return nc, nil
}

// ClientURL is the TCP URL of the server, empty when it does not listen.
func (s *Server) ClientURL() string {
	if s.ns.Addr() == nil {
		return ""
	}
	return s.ns.ClientURL()
}

// Shutdown stops the server and waits for it; it is idempotent. Drain the
// clients first.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}
