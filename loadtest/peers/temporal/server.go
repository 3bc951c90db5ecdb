package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
)

// Stores the dev server can keep its state in.
const (
	// StoreMemory is SQLite in memory: the dev server's default.
	StoreMemory = "memory"
	// StoreFile is SQLite in a file of a temporary directory, as toolwire's
	// embedded JetStream keeps its streams in files of one.
	StoreFile = "file"
)

// ServerConfig is how the Temporal dev server is started.
type ServerConfig struct {
	// CLI is the temporal binary; empty: the cached CLIVersion.
	CLI string
	// NoInstall refuses to `go install` a missing CLI.
	NoInstall bool
	// Store is StoreMemory (the default) or StoreFile.
	Store string
	// DynamicConfig are KEY=VALUE settings (VALUE in JSON) passed on as
	// --dynamic-config-value.
	DynamicConfig []string
	// Log, when set, is told of an install of the CLI. The server's own
	// output goes to a file of its directory, quoted when it fails.
	Log io.Writer
}

func (s *ServerConfig) check() error {
	switch s.Store {
	case "":
		s.Store = StoreMemory
	case StoreMemory, StoreFile:
	default:
		return fmt.Errorf("--store: want %s or %s, got %q", StoreMemory, StoreFile, s.Store)
	}
	for _, kv := range s.DynamicConfig {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("--dynamic-config: want KEY=VALUE, got %q", kv)
		}
	}
	return nil
}

// Server is a running Temporal dev server, a child process.
type Server struct {
	// Addr is the frontend's gRPC address, host:port.
	Addr string
	// Version is what the CLI says of itself and the server it embeds.
	Version string

	cmd  *exec.Cmd
	dir  string
	log  *os.File
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done is closed
}

// readyTimeout is how long the server gets to answer a health check; a
// cold start (SQLite schema, namespace) takes a few seconds.
const readyTimeout = 60 * time.Second

// StartServer starts `temporal server start-dev` on a free port of
// 127.0.0.1, headless, and returns once its frontend answers; Stop ends it.
func StartServer(ctx context.Context, c ServerConfig) (*Server, error) {
	log := c.Log
	if log == nil {
		log = io.Discard
	}
	bin, err := findCLI(ctx, c.CLI, !c.NoInstall, log)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "toolwire-peer-temporal-")
	if err != nil {
		return nil, err
	}
	s := &Server{Version: cliVersion(ctx, bin), dir: dir, done: make(chan struct{})}
	if s.log, err = os.Create(filepath.Join(dir, "server.log")); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		s.cleanup()
		return nil, err
	}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args := []string{"server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--log-level", "warn"}
	if c.Store == StoreFile {
		args = append(args, "--db-filename", filepath.Join(dir, "temporal.db"))
	}
	for _, kv := range c.DynamicConfig {
		args = append(args, "--dynamic-config-value", kv)
	}
	// Not CommandContext: the server is stopped by Stop, with a signal it
	// can shut down on, not killed when ctx ends.
	s.cmd = exec.Command(bin, args...)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = childAttr()
	if err := s.cmd.Start(); err != nil {
		s.cleanup()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// PID is the server process's id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// waitReady polls the frontend's health until it answers, the process
// exits, ctx ends or readyTimeout passes.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = s.healthy(ctx); last == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("temporal dev server exited before it was ready (%v):\n%s", s.err, s.logTail(30))
		case <-ctx.Done():
			return fmt.Errorf("temporal dev server not ready at %s: %v (last: %v):\n%s", s.Addr, ctx.Err(), last, s.logTail(30))
		case <-tick.C:
		}
	}
}

// healthy dials the frontend once and asks for its health.
func (s *Server) healthy(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{HostPort: s.Addr, Logger: quietLogger(nil)})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
	return err
}

// stopTimeout is how long the server gets to shut down on an interrupt
// before it is killed.
const stopTimeout = 10 * time.Second

// Stop interrupts the server, kills it if it has not exited within
// stopTimeout, and removes its directory.
func (s *Server) Stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	s.cleanup()
}

func (s *Server) cleanup() {
	if s.log != nil {
		s.log.Close()
	}
	os.RemoveAll(s.dir)
}

// logTail is the end of the server's output, for an error.
func (s *Server) logTail(n int) string {
	b, err := os.ReadFile(s.log.Name())
	if err != nil {
		return err.Error()
	}
	return tail(string(b), n)
}

// freePort is a TCP port of 127.0.0.1 nobody listened on a moment ago.
// The CLI checks it is free again before binding it.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("no TCP port")
	}
	return addr.Port, nil
}
