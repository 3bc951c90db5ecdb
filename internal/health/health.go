// Package health serves a toolwire process's operational endpoints:
// /healthz (the process is up), /readyz (its stages run, its NATS
// connections are up, and what the process adds with ReadyWhen) and /metrics (Prometheus: Go runtime, process and
// NATS connection figures).
package health

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Stats is what the endpoints read from the running pipeline.
type Stats interface {
	// Stats adds up the traffic of the stages' connections.
	Stats() nats.Statistics
	// Connected reports whether every stage connection is up.
	Connected() bool
	// LateCalls counts the calls that came after their turn's end and were
	// answered without running.
	LateCalls() int64
}

// Server serves the endpoints; set the pipeline with Ready once it runs.
type Server struct {
	srv   *http.Server
	ln    net.Listener
	stats atomic.Pointer[Stats]
	reg   *prometheus.Registry
	// checks are the ReadyWhen checks, replaced (not changed) as one is
	// added.
	checks atomic.Pointer[[]Check]
	addMu  sync.Mutex
}

// Check says what keeps the process from being ready (nil: nothing); it is
// given a context bounded to checkWait.
type Check func(ctx context.Context) error

// checkWait bounds a readiness check: a probe that hangs is a failure.
const checkWait = 2 * time.Second

// Listen binds addr and starts serving.
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("health: listen %s: %w", addr, err)
	}
	reg := prometheus.NewRegistry()
	s := &Server{ln: ln, reg: reg}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(s.counter("toolwire_stage_messages_out_total", "Messages the stages published or requested.", func(st nats.Statistics) uint64 { return st.OutMsgs }))
	reg.MustRegister(s.counter("toolwire_stage_messages_in_total", "Messages the stages received.", func(st nats.Statistics) uint64 { return st.InMsgs }))
	reg.MustRegister(s.counter("toolwire_stage_reconnects_total", "Reconnections of the stages' NATS connections.", func(st nats.Statistics) uint64 { return st.Reconnects }))
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "toolwire_router_late_calls_total",
		Help: "tool_use events that came after their turn's end: answered and dead-lettered, never run.",
	}, func() float64 {
		if p := s.stats.Load(); p != nil {
			return float64((*p).LateCalls())
		}
		return 0
	}))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		p := s.stats.Load()
		switch {
		case p == nil:
			http.Error(w, "starting", http.StatusServiceUnavailable)
		case !(*p).Connected():
			http.Error(w, "a stage's NATS connection is down", http.StatusServiceUnavailable)
		default:
			if err := s.checkAll(r.Context()); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintln(w, "ready")
		}
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Registerer is where the process's own metrics go, served on /metrics.
func (s *Server) Registerer() prometheus.Registerer { return s.reg }

func (s *Server) counter(name, help string, read func(nats.Statistics) uint64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 {
		if p := s.stats.Load(); p != nil {
			return float64(read((*p).Stats()))
		}
		return 0
	})
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Ready makes /readyz and the pipeline metrics follow p.
func (s *Server) Ready(p Stats) { s.stats.Store(&p) }

// ReadyWhen adds a check to /readyz: the streams and consumers the
// process's stages use are there, for instance, or its MCP servers up.
func (s *Server) ReadyWhen(c Check) {
	s.addMu.Lock()
	defer s.addMu.Unlock()
	var checks []Check
	if p := s.checks.Load(); p != nil {
		checks = append(checks, *p...)
	}
	checks = append(checks, c)
	s.checks.Store(&checks)
}

// checkAll runs every check, all within checkWait, and reports what each
// that failed said: a probe names everything that keeps the process from
// being ready, not only the first.
func (s *Server) checkAll(ctx context.Context) error {
	p := s.checks.Load()
	if p == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, checkWait)
	defer cancel()
	var errs []error
	for _, c := range *p {
		errs = append(errs, c(ctx))
	}
	return errors.Join(errs...)
}

// Close stops serving.
func (s *Server) Close(ctx context.Context) error {
	if err := s.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
