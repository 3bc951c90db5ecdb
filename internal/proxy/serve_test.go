package proxy_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/proxy"
	"github.com/toolwire/toolwire/modelstream/sse"
)

// serve runs p.Serve on a fresh local listener until the returned cancel;
// the channel gives Serve's error and when it returned.
func serve(t *testing.T, p *proxy.Proxy) (addr string, cancel context.CancelFunc, served <-chan servedAt) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan servedAt, 1)
	go func() {
		err := p.Serve(ctx, ln)
		ch <- servedAt{err, time.Now()}
	}()
	t.Cleanup(cancel)
	return ln.Addr().String(), cancel, ch
}

type servedAt struct {
	err error
	at  time.Time
}

func newProxy(t *testing.T, e *env, upstream string, grace time.Duration) *proxy.Proxy {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	p, err := proxy.New(proxy.Config{Upstream: u, Format: "anthropic", Client: e.cl, Log: testLogger(t), ShutdownGrace: grace})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// cancelOnRequest cancels once the upstream has seen a request: the stream
// is then in flight.
func cancelOnRequest(log *upstreamLog, cancel context.CancelFunc) {
	go func() {
		for {
			log.mu.Lock()
			n := log.requests
			log.mu.Unlock()
			if n > 0 {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
}

func waitServed(t *testing.T, served <-chan servedAt, within time.Duration) servedAt {
	t.Helper()
	select {
	case s := <-served:
		return s
	case <-time.After(within):
		t.Fatalf("Serve did not return within %v", within)
		return servedAt{}
	}
}

// TestServeDrainsStreamsInFlight: once the context ends, a stream in
// flight still reaches the caller whole and its turn ends with its calls;
// Serve returns nil after it, and the listener is closed.
func TestServeDrainsStreamsInFlight(t *testing.T) {
	data := fixture(t, "anthropic_parallel_tool_use.sse")
	e := startEnv(t)
	up, log := replay(t, "text/event-stream", sse.Split(data), false)
	addr, cancel, served := serve(t, newProxy(t, e, up.URL, 0))
	cancelOnRequest(log, cancel)

	c := call(t, e.cl, "http://"+addr+"/v1/messages", nil, true)

	if c.resp.StatusCode != http.StatusOK || c.bodyErr != nil || string(c.body) != string(data) {
		t.Fatalf("status %d, body error %v, %d bytes of %d", c.resp.StatusCode, c.bodyErr, len(c.body), len(data))
	}
	c.checkResults(t, "secret_retrieval_tool", "mellon", "radiance")
	s := waitServed(t, served, 30*time.Second)
	if s.err != nil {
		t.Fatalf("Serve: %v", s.err)
	}
	if s.at.Before(log.ended()) {
		t.Errorf("Serve returned at %v, before the stream ended at %v", s.at, log.ended())
	}
	if conn, err := net.Dial("tcp", addr); err == nil {
		conn.Close()
		t.Error("still accepting after Serve returned")
	}
}

// TestServeGraceIsBounded: a stream that never ends is cut at the end of
// the grace period; Serve returns nil soon after, its turn ended.
func TestServeGraceIsBounded(t *testing.T) {
	e := startStreams(t)
	release := make(chan struct{})
	log := &upstreamLog{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.seen(r)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer up.Close()
	defer close(release)
	const grace = 300 * time.Millisecond
	addr, cancel, served := serve(t, newProxy(t, e, up.URL, grace))
	cancelOnRequest(log, cancel)

	start := time.Now()
	c := call(t, e.cl, "http://"+addr+"/v1/messages", nil, false)

	if c.bodyErr == nil || !strings.HasPrefix(string(c.body), "event: message_start") {
		t.Errorf("body error %v, body %q; want the first event, then a cut", c.bodyErr, c.body)
	}
	s := waitServed(t, served, 10*time.Second)
	if s.err != nil {
		t.Fatalf("Serve: %v", s.err)
	}
	if took := s.at.Sub(start); took < grace || took > grace+5*time.Second {
		t.Errorf("Serve returned %v after the request; grace %v", took, grace)
	}
	// Serve waited for the turn: its end, with the calls completed before
	// the cut (none), is published when Serve returns.
	if k := e.inKinds(t, c.turn); k["end"] != 1 || k["use"] != 0 {
		t.Errorf("published for the turn: %v; want its end alone", k)
	}
}

// TestServeListenerFails: a listener that cannot accept is Serve's error,
// naming it, without waiting for the context.
func TestServeListenerFails(t *testing.T) {
	e := startStreams(t)
	p := newProxy(t, e, "http://127.0.0.1:1", 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	errc := make(chan error, 1)
	go func() { errc <- p.Serve(context.Background(), ln) }()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "proxy: serving on "+ln.Addr().String()) {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve on a closed listener did not return")
	}
}
