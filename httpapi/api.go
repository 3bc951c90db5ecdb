// Package httpapi is toolwire's HTTP API, for agents in any language: submit
// a model's raw stream or a list of calls for a turn, read the turn's
// results in call order as server-sent events, cancel, discard, answer
// approvals, fetch stored output. It is a thin front on the client
// package; the contract is the OpenAPI document schemas.OpenAPI returns.
package httpapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/tracing"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// Defaults of the bounds Config leaves at zero.
const (
	// DefaultMaxStreamBytes bounds one uploaded model stream.
	DefaultMaxStreamBytes = 64 << 20
	// DefaultMaxBodyBytes bounds every other request body.
	DefaultMaxBodyBytes = 16 << 20
	// DefaultHeartbeat is how often an idle event stream gets a comment,
	// well under the minute proxies commonly close idle connections after.
	DefaultHeartbeat = 15 * time.Second
	// DefaultWriteTimeout is how long one event may wait for a reader that
	// takes no bytes before its stream is closed: a slow reader costs the
	// server a bounded buffer, never a growing one.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMaxStreams bounds the event streams open at once.
	DefaultMaxStreams = 4096
	// DefaultPublishWait is how long a request waits for room in the
	// pipeline before it is told to slow down.
	DefaultPublishWait = 10 * time.Second
)

// Config configures the API.
type Config struct {
	// Conn is the NATS connection of every tenant's client.
	Conn *nats.Conn
	// Space is the pipeline's name space (subjects.Default unless
	// configured).
	Space subjects.Space
	// Tokens maps each API token to its tenant. Empty: no authentication,
	// every request is subjects.DefaultTenant's (for a loopback address).
	Tokens map[string]string
	// Tools renders the tools list the pipeline offers, as `toolwire
	// tools` prints it (nil: GET /v1/tools answers 404).
	Tools func(tool.Format) ([]byte, error)
	// Limits are the pipeline's event limits (zero fields: the defaults);
	// the API refuses a turn of more calls than they allow.
	Limits schemas.Limits
	// MaxStreamBytes and MaxBodyBytes bound request bodies (0: the
	// defaults above).
	MaxStreamBytes int64
	MaxBodyBytes   int64
	// Heartbeat and WriteTimeout tune event streams (0: the defaults).
	Heartbeat    time.Duration
	WriteTimeout time.Duration
	// MaxStreams bounds the event streams open at once (0:
	// DefaultMaxStreams): each holds at most one turn's results.
	MaxStreams int
	// PublishWait bounds how long a request waits for a pipeline that is
	// behind before it is answered 429 (0: DefaultPublishWait). A stream
	// upload is slowed down instead: its reads wait.
	PublishWait time.Duration
	// Log receives what a client cannot be told (nil: discarded).
	Log *slog.Logger
}

// API serves the HTTP API; it is an http.Handler.
type API struct {
	cfg    Config
	tokens map[[sha256.Size]byte]string // digest of a token → its tenant
	mux    *http.ServeMux
	// routes knows the paths without their methods, to tell a wrong
	// method (405) from a wrong path (404).
	routes *http.ServeMux

	mu      sync.Mutex
	clients map[string]*client.Client // by tenant

	streams   chan struct{} // closed by CloseStreams
	closeOnce sync.Once
	open      atomic.Int64   // event streams open now
	inflight  sync.WaitGroup // requests under way
}

// New returns the API over cfg.Conn.
func New(cfg Config) (*API, error) {
	if cfg.Conn == nil {
		return nil, errors.New("httpapi: no NATS connection")
	}
	if err := cfg.Space.Check(); err != nil {
		return nil, fmt.Errorf("httpapi: %w", err)
	}
	cfg.Limits = cfg.Limits.WithDefaults()
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&cfg.MaxStreamBytes, DefaultMaxStreamBytes)
	def(&cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.PublishWait <= 0 {
		cfg.PublishWait = DefaultPublishWait
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	a := &API{cfg: cfg, tokens: map[[sha256.Size]byte]string{}, clients: map[string]*client.Client{}, streams: make(chan struct{})}
	for tok, tenant := range cfg.Tokens {
		if err := subjects.CheckToken("tenant", tenant); err != nil {
			return nil, fmt.Errorf("httpapi: token of tenant %q: %w", tenant, err)
		}
		if tok == "" {
			return nil, fmt.Errorf("httpapi: tenant %q has an empty token", tenant)
		}
		a.tokens[sha256.Sum256([]byte(tok))] = tenant
	}
	a.routes = http.NewServeMux()
	a.mux = http.NewServeMux()
	a.handle("GET /v1/openapi.json", false, a.openAPI)
	a.handle("GET /v1/tools", true, a.tools)
	a.handle("POST /v1/turns/{turn}/stream", true, a.submitStream)
	a.handle("POST /v1/turns/{turn}/calls", true, a.submitCalls)
	a.handle("GET /v1/turns/{turn}/results", true, a.results)
	a.handle("POST /v1/turns/{turn}/cancel", true, a.cancel)
	a.handle("POST /v1/turns/{turn}/discard", true, a.discard)
	a.handle("GET /v1/turns/{turn}/approvals", true, a.approvals)
	a.handle("POST /v1/turns/{turn}/approvals/{seq}", true, a.decide)
	a.handle("GET /v1/blobs/{ref...}", true, a.blob)
	a.mux.HandleFunc("/", a.notFound)
	return a, nil
}

// request is what a handler gets: the client of the request's tenant.
type request struct {
	*http.Request
	tenant string
	c      *client.Client
}

// handler answers a request or returns the error its client is told, as
// a problem document (unless it has begun answering).
type handler func(w http.ResponseWriter, r *request) error

// handle registers h on pattern; authed handlers need the tenant's token
// when the API has tokens.
func (a *API) handle(pattern string, authed bool, h handler) {
	_, path, _ := strings.Cut(pattern, " ")
	a.routes.HandleFunc(path, func(http.ResponseWriter, *http.Request) {})
	a.mux.HandleFunc(pattern, func(rw http.ResponseWriter, hr *http.Request) {
		a.inflight.Add(1)
		defer a.inflight.Done()
		w := &tracked{ResponseWriter: rw}
		if tp := hr.Header.Get("Traceparent"); tp != "" {
			// The caller's W3C trace context: the turn's events carry
			// it, so the pipeline's spans continue the caller's trace
			// (a malformed one is ignored).
			hr = hr.WithContext(tracing.Extract(hr.Context(), tp, hr.Header.Get("Tracestate")))
		}
		r := &request{Request: hr}
		if authed {
			tenant, err := a.tenant(hr)
			if err != nil {
				writeProblem(w, hr, err)
				return
			}
			if r.c, err = a.client(tenant); err != nil {
				writeProblem(w, hr, err)
				return
			}
			r.tenant = tenant
		}
		if err := h(w, r); err != nil {
			if w.wrote {
				// The answer has begun: a problem cannot follow it.
				a.cfg.Log.Warn("request failed after its answer began", "path", hr.URL.Path, "err", err)
				return
			}
			writeProblem(w, hr, err)
		}
	})
}

// tracked records whether the answer has begun.
type tracked struct {
	http.ResponseWriter
	wrote bool
}

func (t *tracked) WriteHeader(code int) {
	t.wrote = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *tracked) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's deadlines and
// flushing.
func (t *tracked) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// Wait blocks until the requests under way have ended, or ctx does: a
// server shutting down closes its NATS connection only after the turns of
// cut uploads are closed.
func (a *API) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		a.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ServeHTTP implements http.Handler.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

// CloseStreams ends every event stream open now or later (their clients
// see the stream close and reconnect elsewhere with Last-Event-ID), so
// that a server shutting down is not held by readers waiting for results.
func (a *API) CloseStreams() { a.closeOnce.Do(func() { close(a.streams) }) }

// tenant is the tenant of r's bearer token; without tokens, the default,
// for a request that no web page can have made.
func (a *API) tenant(r *http.Request) (string, error) {
	if len(a.tokens) == 0 {
		return subjects.DefaultTenant, notFromABrowser(r)
	}
	auth := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", problemf(kindUnauthorized, "send Authorization: Bearer TOKEN with a tenant's API token")
	}
	tenant, ok := a.tokens[sha256.Sum256([]byte(strings.TrimSpace(tok)))]
	if !ok {
		return "", problemf(kindUnauthorized, "the bearer token is not a tenant's API token")
	}
	return tenant, nil
}

// notFromABrowser refuses, on an API without tokens, what a web page could
// send: a page may POST to 127.0.0.1 without asking (a "simple" request),
// and a page whose name is rebound to 127.0.0.1 may read the answers. A
// browser names the page in Origin or Sec-Fetch-Site, and a rebound name
// reaches the server in Host; agents and curl send neither of the first
// two and name the loopback address they dial.
func notFromABrowser(r *http.Request) error {
	if o := r.Header.Get("Origin"); o != "" {
		return problemf(kindForbidden, "a request from a web page (Origin %q) is refused: this API has no tokens", o)
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "none" {
		return problemf(kindForbidden, "a request from a web page (Sec-Fetch-Site %q) is refused: this API has no tokens", site)
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
		return problemf(kindForbidden, "Host %q is not a loopback name: this API has no tokens and answers only requests to 127.0.0.1, [::1] or localhost", r.Host)
	}
	return nil
}

// client is tenant's client, made on first use.
func (a *API) client(tenant string) (*client.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.clients[tenant]; ok {
		return c, nil
	}
	c, err := client.New(a.cfg.Conn, client.Config{Space: a.cfg.Space, Tenant: tenant, Source: "/toolwire/httpapi"})
	if err != nil {
		return nil, err
	}
	a.clients[tenant] = c
	return c, nil
}

// notFound answers what no route takes: a known path with another method
// is 405, anything else 404.
func (a *API) notFound(w http.ResponseWriter, r *http.Request) {
	if _, pattern := a.routes.Handler(r); pattern != "" && pattern != "/" {
		writeProblem(w, r, problemf(kindMethod, "%s is not allowed on %s", r.Method, r.URL.Path))
		return
	}
	writeProblem(w, r, problemf(kindNotFound, "no API path %s (the API's paths: GET /v1/openapi.json)", r.URL.Path))
}
