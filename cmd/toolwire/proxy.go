package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/proxy"
	"github.com/toolwire/toolwire/modelstream/formats"
	"github.com/toolwire/toolwire/subjects"
)

func newProxy() *cobra.Command {
	var f proxyFlags
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
			up, err := f.check()
			if err != nil {
				return err
			}
			log, err := f.logs.logger(os.Stderr)
			if err != nil {
				return usageError("proxy: %w", err)
			}
			opts, err := f.auth.options()
			if err != nil {
				return usageError("proxy: %w", err)
			}
			f.natsURL = natsURLOrEnv(cmd, f.natsURL)
			nc, err := nats.Connect(f.natsURL, append([]nats.Option{nats.Name("toolwire-proxy"), nats.MaxReconnects(-1)}, opts...)...)
			if err != nil {
				return fmt.Errorf("proxy: connect %s: %w", f.natsURL, err)
			}
			defer nc.Close()
			cl, err := client.New(nc, client.Config{Space: subjects.Default(), Tenant: f.tenant, Source: "/toolwire/proxy"})
			if err != nil {
				return err
			}
			p, err := proxy.New(proxy.Config{
				Upstream: up, Format: f.format, Client: cl, Log: log,
				TurnOptions: client.TurnOptions{MaxConcurrency: f.maxConc},
			})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", f.listen)
			if err != nil {
				return fmt.Errorf("proxy: %w", err)
			}
			log.Info("toolwire proxy listening", "addr", ln.Addr().String(), "upstream", up.String(), "format", f.format, "nats", f.natsURL)
			if err := p.Serve(cmd.Context(), ln); err != nil {
				return err
			}
			if err := nc.Flush(); err != nil {
				log.Warn("flushing NATS", "err", err)
			}
			log.Info("stopped")
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8081", "address the proxy listens on")
	fs.StringVar(&f.upstream, "upstream", "", "base URL of the model API, e.g. https://api.anthropic.com (required)")
	fs.StringVar(&f.format, "format", "", "stream format of the upstream (required): "+strings.Join(formats.Names(), ", "))
	fs.StringVar(&f.natsURL, "nats", nats.DefaultURL, "NATS server of the pipeline")
	f.auth.register(fs)
	f.logs.register(fs)
	fs.StringVar(&f.tenant, "tenant", subjects.DefaultTenant, "tenant of the turns")
	fs.IntVar(&f.maxConc, "max-concurrency", 0, "per-turn concurrency limit (default: the router's)")
	return cmd
}

// proxyFlags are the proxy command's flags.
type proxyFlags struct {
	listen, upstream, format, natsURL, tenant string
	maxConc                                   int
	auth                                      natsAuth
	logs                                      logFlags
}

// check checks the flags before anything connects, and returns the
// upstream's URL.
func (f *proxyFlags) check() (*url.URL, error) {
	up, err := upstreamURL(f.upstream)
	if err != nil {
		return nil, err
	}
	if f.format == "" {
		return nil, fmt.Errorf("proxy: --format is required (known: %s)", strings.Join(formats.Names(), ", "))
	}
	if _, err := formats.Parser(f.format); err != nil {
		return nil, fmt.Errorf("proxy: --format: %w", err)
	}
	if err := subjects.CheckToken("tenant", f.tenant); err != nil {
		return nil, fmt.Errorf("proxy: --tenant: %w", err)
	}
	if f.maxConc < 0 {
		return nil, fmt.Errorf("proxy: --max-concurrency must not be negative, got %d", f.maxConc)
	}
	return up, nil
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
