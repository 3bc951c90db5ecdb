package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// DefaultShutdownGrace is how long, by default, the streams in flight may
// run on once Serve's context ends before their connections are closed.
const DefaultShutdownGrace = 30 * time.Second

// readHeaderTimeout bounds a caller's request headers, so that a silent
// connection does not hold a server goroutine forever.
const readHeaderTimeout = 30 * time.Second

// Serve serves the proxy on ln until ctx ends, then shuts down: it stops
// accepting, lets the streams in flight finish for up to
// Config.ShutdownGrace, closes the connections of those still running, and
// waits until every tapped turn is published or given up (Wait). It closes
// ln. It returns nil after a shutdown ctx asked for, and the error when
// serving fails before that.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           p,
		ReadHeaderTimeout: readHeaderTimeout,
		ErrorLog:          slog.NewLogLogger(p.cfg.Log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		// The streams of a server that failed are cut by its listener's
		// end; their turns still end.
		_ = srv.Close()
		p.Wait()
		return fmt.Errorf("proxy: serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	p.cfg.Log.Info("shutting down", "grace", p.cfg.ShutdownGrace)
	drain, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(drain); err != nil {
		p.cfg.Log.Warn("streams still running at the end of the grace period; closing them", "err", err)
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("proxy: serving on %s: %w", ln.Addr(), err)
	}
	p.Wait() // the last calls and turn ends are published
	return nil
}
