package mcp

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServerConfig says how to reach one MCP server: a command to run over
// stdio, or the URL of a streamable-HTTP endpoint. Exactly one of Command and
// URL must be set.
type ServerConfig struct {
	// Name is the server's name; its tools are called mcp__<Name>__<tool>
	// (see ToolName for the characters that are replaced).
	Name string `json:"name"`

	// Command and Args start a stdio server. The process inherits this
	// process's environment with Env ("KEY=value" entries) laid over it, and
	// leads a process group of its own: a terminal's Ctrl-C reaches toolwire
	// only, and toolwire stops the whole group, so that a server started
	// through a launcher (npx, uvx) goes with it (Close).
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	Env     []string `json:"env,omitempty"`

	// URL is a streamable-HTTP endpoint; Headers are sent with every
	// request to it (an Authorization header, for example).
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// ErrInvalidConfig is returned by Connect for a configuration that cannot work.
var ErrInvalidConfig = errors.New("mcp: invalid server config")

func (c ServerConfig) validate() error {
	switch {
	case c.Name == "":
		return fmt.Errorf("%w: empty name", ErrInvalidConfig)
	case c.Command == "" && c.URL == "":
		return fmt.Errorf("%w: server %s has neither command nor url", ErrInvalidConfig, c.Name)
	case c.Command != "" && c.URL != "":
		return fmt.Errorf("%w: server %s has both command and url", ErrInvalidConfig, c.Name)
	case c.Command == "" && (len(c.Args) > 0 || len(c.Env) > 0):
		return fmt.Errorf("%w: server %s has args or env but no command", ErrInvalidConfig, c.Name)
	case c.URL == "" && len(c.Headers) > 0:
		return fmt.Errorf("%w: server %s has headers but no url", ErrInvalidConfig, c.Name)
	}
	return nil
}

// transport builds a fresh transport for one connection attempt; stderr
// receives a stdio server's standard error, lost hears of an HTTP server
// found unreachable.
func (c ServerConfig) transport(stderr *stderrTail, lost *lost) mcpsdk.Transport {
	if c.URL != "" {
		rt := http.DefaultTransport
		if len(c.Headers) > 0 {
			rt = headerTransport{headers: c.Headers, next: rt}
		}
		hc := &http.Client{Transport: lostTransport{next: rt, lost: lost}}
		return &mcpsdk.StreamableClientTransport{Endpoint: c.URL, HTTPClient: hc}
	}
	// Not exec.CommandContext: the process lives as long as its session,
	// not as long as the context that started it.
	cmd := exec.Command(c.Command, c.Args...)
	cmd.Env = append(os.Environ(), c.Env...)
	return &stdioTransport{cmd: cmd, stderr: stderr}
}

// describe names the server for logs.
func (c ServerConfig) describe() string {
	if c.URL != "" {
		return c.URL
	}
	return c.Command
}

// connectTimeout bounds one restart attempt (start, initialize).
var connectTimeout = 30 * time.Second
