package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/proxy"
	"github.com/toolwire/toolwire/modelstream/formats"
	"github.com/toolwire/toolwire/subjects"
)

// proxyShutdownGrace is how long streams in flight may run on after
// SIGINT/SIGTERM before their connections are closed.
const proxyShutdownGrace = 30 * time.Second

func newProxy() *cobra.Command {
	var (
		listen, upstream, format, natsURL, tenant string
		maxConc                                   int
	)
	cmd := &cobra.Command{
		Use:   "proxy --upstream URL --format FORMAT",
		Short: "Reverse-proxy a model API and run the tool calls of its streamed responses as they complete",
		Long: `proxy is an HTTP reverse proxy for a model API. Point the agent's SDK at it instead
of the API: each response comes back unchanged, byte for byte and unbuffered, while
a parser taps the stream and publishes every tool call the moment it is complete to
the pipeline on --nats (run by toolwire serve; the proxy runs no stage itself).

The turn id is the request's X-Toolwire-Turn header, or a fresh one; either way the
response carries it in X-Toolwire-Turn, and the agent reads the turn's results in
call order with client.Results. Only successful streams are tapped (text/event-stream,
or for hermes a streamed text/* body); errors and non-streaming responses pass
through untouched and publish nothing.

Formats: ` + strings.Join(formats.Names(), ", ") + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			up, err := upstreamURL(upstream)
			if err != nil {
				return err
			}
			if format == "" {
				return fmt.Errorf("proxy: --format is required (known: %s)", strings.Join(formats.Names(), ", "))
			}
			if _, err := formats.Parser(format); err != nil {
				return fmt.Errorf("proxy: --format: %w", err)
			}
			if err := subjects.CheckToken("tenant", tenant); err != nil {
				return fmt.Errorf("proxy: --tenant: %w", err)
			}
			if maxConc < 0 {
				return fmt.Errorf("proxy: --max-concurrency must not be negative, got %d", maxConc)
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, nil))

			nc, err := nats.Connect(natsURL, nats.Name("toolwire-proxy"), nats.MaxReconnects(-1))
			if err != nil {
				return fmt.Errorf("proxy: connect %s: %w", natsURL, err)
			}
			defer nc.Close()
			cl, err := client.New(nc, client.Config{Space: subjects.Default(), Tenant: tenant, Source: "/toolwire/proxy"})
			if err != nil {
				return err
			}
			p, err := proxy.New(proxy.Config{
				Upstream: up, Format: format, Client: cl, Log: log,
				TurnOptions: client.TurnOptions{MaxConcurrency: maxConc},
			})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("proxy: %w", err)
			}
			srv := &http.Server{
				Handler:           p,
				ReadHeaderTimeout: 30 * time.Second,
				ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
			}
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ln) }()
			log.Info("toolwire proxy listening", "addr", ln.Addr().String(), "upstream", up.String(), "format", format, "nats", natsURL)

			select {
			case err := <-served:
				return fmt.Errorf("proxy: %w", err)
			case <-cmd.Context().Done():
			}
			log.Info("shutting down", "grace", proxyShutdownGrace)
			ctx, cancel := context.WithTimeout(context.Background(), proxyShutdownGrace)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				log.Warn("streams still running at the end of the grace period; closing them", "err", err)
				_ = srv.Close()
			}
			if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("proxy: %w", err)
			}
			p.Wait() // the last calls and turn ends are published
			if err := nc.Flush(); err != nil {
				log.Warn("flushing NATS", "err", err)
			}
			log.Info("stopped")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:8081", "address the proxy listens on")
	f.StringVar(&upstream, "upstream", "", "base URL of the model API, e.g. https://api.anthropic.com (required)")
	f.StringVar(&format, "format", "", "stream format of the upstream (required): "+strings.Join(formats.Names(), ", "))
	f.StringVar(&natsURL, "nats", nats.DefaultURL, "NATS server of the pipeline")
	f.StringVar(&tenant, "tenant", subjects.DefaultTenant, "tenant of the turns")
	f.IntVar(&maxConc, "max-concurrency", 0, "per-turn concurrency limit (default: the router's)")
	return cmd
}

// upstreamURL checks --upstream: an http or https URL with a host.
func upstreamURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("proxy: --upstream URL is required")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("proxy: --upstream: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("proxy: --upstream %q: want an http:// or https:// URL with a host", s)
	}
	return u, nil
}
