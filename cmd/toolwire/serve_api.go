package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/toolwire/toolwire/httpapi"
	"github.com/toolwire/toolwire/internal/config"
	"github.com/toolwire/toolwire/internal/toolset"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// apiDrain bounds how long serve waits for API uploads under way to end.
const apiDrain = 10 * time.Second

// startAPI serves the HTTP API on addr over a connection of its own. The
// tokens come from the configuration; without them the address must be a
// loopback one, since anyone who reaches it could run tools.
func startAPI(addr string, cfg *config.Config, set *toolset.Set, dial pipeline.Dialer, log *slog.Logger) (stop func(), err error) {
	tokens, err := cfg.APITokens()
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if len(tokens) == 0 && !loopback(addr) {
		return nil, fmt.Errorf("serve: --api %s is not a loopback address and the configuration names no API tokens: anyone who reaches it could run tools; "+
			`add {"api": {"tenants": {"NAME": {"token_file": "FILE"}}}} to --config, or listen on 127.0.0.1`, addr)
	}
	nc, err := dial("toolwire-api")
	if err != nil {
		return nil, fmt.Errorf("serve: api: %w", err)
	}
	api, err := httpapi.New(httpapi.Config{
		Conn: nc, Space: subjects.Default(), Tokens: tokens, Limits: set.Limits, Log: log,
		Tools: func(f tool.Format) ([]byte, error) { return tool.Render(f, set.Plan.Entries(nil)) },
	})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	srv, err := httpapi.Listen(addr, api)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("serve: %w", err)
	}
	log.Info("HTTP API listening", "addr", srv.Addr(), "tenants", len(tokens))
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), apiDrain)
		defer cancel()
		_ = srv.Close(ctx)
		nc.Close()
	}, nil
}

// loopback reports whether addr's host is a loopback name or address (an
// empty host listens everywhere).
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
