package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server is the API listening on an address.
type Server struct {
	api *API
	srv *http.Server
	ln  net.Listener
}

// Listen binds addr and serves api on it. Bodies and streams may take as
// long as their model does, so only the headers have a read deadline; each
// event stream write has its own (Config.WriteTimeout).
func Listen(addr string, api *API) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("httpapi: listen %s: %w", addr, err)
	}
	s := &Server{api: api, ln: ln, srv: &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}}
	// Event streams never end on their own: Shutdown ends them, then
	// waits for the uploads and requests under way.
	s.srv.RegisterOnShutdown(api.CloseStreams)
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address the API listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops taking requests, ends the event streams and waits until ctx
// ends for the requests under way (an upload finishes, or is cut and its
// turn discarded).
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		err = s.srv.Close()
		// The uploads just cut close their turns (a discard each) on the
		// way out: wait for them, so that the connection they publish on
		// is still open.
		wctx, cancel := context.WithTimeout(context.Background(), closeWait+time.Second)
		defer cancel()
		_ = s.api.Wait(wctx)
	}
	return err
}
