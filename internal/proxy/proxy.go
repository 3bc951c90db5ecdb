// Package proxy is an HTTP reverse proxy for a model API that runs the
// tool calls of the model's streamed responses through toolwire while the
// caller still reads them.
//
// The caller talks to the proxy as it would to the model API. The response
// comes back unchanged, byte for byte, each read from the upstream written
// and flushed to the caller at once; meanwhile a parser for the configured
// format taps a copy of the stream and publishes each tool call the moment
// it is complete (client.SubmitStream), then the turn's end. The caller
// reads the ordered results with client.Results, using the turn id of the
// X-Toolwire-Turn response header.
//
// # Turn id
//
// A request may name its turn in the X-Toolwire-Turn header (letters,
// digits, '-' and '_', at most 128 bytes; anything else gets 400). Without
// it a fresh id is made. Every response the proxy gives, tapped or not,
// carries the turn id in X-Toolwire-Turn. The header is not forwarded
// upstream. Use a new turn id for each model response: a reused one
// refers to a turn that already has its calls.
//
// # What is tapped
//
// Only a successful streamed response (see Tapped): status 2xx (not 204 or
// 205, and not the answer to HEAD), not content-encoded, and
//
//   - for the SSE formats (anthropic, gemini, openai-chat, ...), a
//     Content-Type of text/event-stream;
//   - for hermes, whose parser reads raw model text, a text/* Content-Type
//     other than text/event-stream (an SSE stream would hide the tags in
//     escaped JSON) whose length is not announced (chunked, or until the
//     connection closes): a text response with a Content-Length is a
//     complete, non-streaming answer.
//
// Everything else — errors, application/json answers of non-streaming
// requests, anything else — passes through untouched and publishes
// nothing. To keep the stream readable, the request sent upstream asks for
// Accept-Encoding: identity (this also keeps Go's transport from
// decompressing the response on the caller's behalf, so the caller gets
// the upstream's bytes exactly). An upstream that compresses a stream that
// should be tapped anyway gets its turn discarded (client.Discard) with
// the reason, so a caller waiting on Results is not left hanging.
//
// # The tap never slows the caller
//
// Between the caller's stream and the parser sits a bounded buffer
// (Config.TapBuffer bytes). Copying into it never waits. When the parser
// falls further behind than that (publishing is slow, NATS is down), the
// tap stops for good: the parser's stream is cut, the turn is discarded
// with client.Discard and a warning is logged; the caller's stream goes on
// unchanged. A failure to publish is handled the same way. When the
// upstream stream fails, or the caller goes away before it ends, the
// parser's stream is cut with that error: the parser reports End with the
// error, and the turn ends (turn_end) with the calls completed before the
// cut.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/modelstream/formats"
	"github.com/toolwire/toolwire/subjects"
)

// HeaderTurn names the turn of a request and of its response.
const HeaderTurn = "X-Toolwire-Turn"

// DefaultTapBuffer is how far, in bytes, the parser may fall behind the
// caller's stream before the tap is stopped.
const DefaultTapBuffer = 4 << 20

// controlTimeout bounds a discard published after the request is over.
const controlTimeout = 10 * time.Second

// Config configures a proxy.
type Config struct {
	// Upstream is the model API's base URL; a request's path is appended to
	// its path and its query kept.
	Upstream *url.URL
	// Format is the stream format of the upstream (see formats.Names).
	Format string
	// Client publishes the calls (its tenant is the turns' tenant).
	Client *client.Client
	// Log receives the proxy's reports (default: discarded).
	Log *slog.Logger
	// TurnOptions apply to every turn.
	TurnOptions client.TurnOptions
	// TapBuffer is how far the parser may fall behind, in bytes (default
	// DefaultTapBuffer).
	TapBuffer int
	// Transport sends requests upstream (default http.DefaultTransport).
	Transport http.RoundTripper
	// ShutdownGrace is how long Serve lets the streams in flight run on
	// once its context ends (default DefaultShutdownGrace).
	ShutdownGrace time.Duration
}

// Proxy is the proxy's http.Handler.
type Proxy struct {
	cfg  Config
	rp   *httputil.ReverseProxy
	turn sync.WaitGroup
}

var _ http.Handler = (*Proxy)(nil)

type turnKey struct{}

// New checks cfg and returns the proxy.
func New(cfg Config) (*Proxy, error) {
	if cfg.Upstream == nil || cfg.Upstream.Host == "" || (cfg.Upstream.Scheme != "http" && cfg.Upstream.Scheme != "https") {
		return nil, fmt.Errorf("proxy: upstream must be an http or https URL with a host, got %v", cfg.Upstream)
	}
	if _, err := formats.Parser(cfg.Format); err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	if cfg.Client == nil {
		return nil, errors.New("proxy: no client")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.TapBuffer <= 0 {
		cfg.TapBuffer = DefaultTapBuffer
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	p := &Proxy{cfg: cfg}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      cfg.Transport,
		FlushInterval:  -1,
		ErrorLog:       slog.NewLogLogger(cfg.Log.Handler(), slog.LevelWarn),
		ModifyResponse: p.modifyResponse,
	}
	return p, nil
}

// ServeHTTP settles the turn id and proxies the request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var turn string
	switch ids := r.Header.Values(HeaderTurn); len(ids) {
	case 0:
		turn = client.NewTurnID()
	case 1:
		turn = ids[0]
		if err := subjects.CheckToken("turn", turn); err != nil {
			http.Error(w, fmt.Sprintf("toolwire proxy: bad %s header: %v", HeaderTurn, err), http.StatusBadRequest)
			return
		}
	default:
		http.Error(w, fmt.Sprintf("toolwire proxy: bad %s header: %d values, want one", HeaderTurn, len(ids)), http.StatusBadRequest)
		return
	}
	w.Header().Set(HeaderTurn, turn)
	// The upstream request may still be reading the caller's body when the
	// response starts; without full duplex the HTTP/1 server drains and
	// closes that body on the response's first write, and the transport's
	// read of it fails and takes the upstream connection down
	// (golang/go#40747). Not every ResponseWriter supports it; HTTP/2
	// always is.
	_ = http.NewResponseController(w).EnableFullDuplex()
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), turnKey{}, turn)))
}

// Wait waits until every tapped turn has been published (or given up). A
// turn's publishing ends shortly after its response does; call Wait after
// the server's Shutdown (Serve does).
func (p *Proxy) Wait() { p.turn.Wait() }

func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	pr.Out.URL.RawQuery = pr.In.URL.RawQuery // exactly as sent, even parameters Go cannot parse
	pr.SetURL(p.cfg.Upstream)                // scheme, host, joined path, Host header
	pr.Out.Header.Del(HeaderTurn)
	pr.Out.Header.Set("Accept-Encoding", "identity")
}

// Tapped says whether a response of the upstream is tapped for format
// (see the package documentation).
func Tapped(format string, resp *http.Response) bool {
	if resp.StatusCode < 200 || resp.StatusCode > 299 || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusResetContent {
		return false
	}
	if resp.Request != nil && resp.Request.Method == http.MethodHead {
		return false
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		return false
	}
	if format != "hermes" {
		return mt == "text/event-stream"
	}
	return strings.HasPrefix(mt, "text/") && mt != "text/event-stream" && resp.ContentLength < 0
}

func (p *Proxy) modifyResponse(resp *http.Response) error {
	resp.Header.Del(HeaderTurn) // the proxy's own value is already set
	turn, _ := resp.Request.Context().Value(turnKey{}).(string)
	if turn == "" || !Tapped(p.cfg.Format, resp) {
		p.cfg.Log.Debug("passing through", "turn", turn, "status", resp.StatusCode, "content_type", resp.Header.Get("Content-Type"))
		return nil
	}
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		reason := fmt.Sprintf("toolwire proxy: cannot read a stream with Content-Encoding %q", enc)
		p.cfg.Log.Warn("stream not tapped; discarding the turn", "turn", turn, "content_encoding", enc)
		p.turn.Go(func() { p.discard(turn, reason) })
		return nil
	}
	p.tap(resp, turn)
	return nil
}

// tap puts the parser on resp's body.
func (p *Proxy) tap(resp *http.Response, turn string) {
	parser, err := formats.Parser(p.cfg.Format)
	if err != nil { // checked by New
		p.cfg.Log.Error("no parser", "turn", turn, "err", err)
		return
	}
	buf := newTapBuffer(p.cfg.TapBuffer)
	resp.Body = &tapBody{ReadCloser: resp.Body, buf: buf, onOverflow: func() {
		p.cfg.Log.Warn("parser fell behind the stream; tap stopped, the turn will be discarded", "turn", turn, "tap_buffer", p.cfg.TapBuffer)
	}}
	log := p.cfg.Log.With("turn", turn)
	log.Debug("tapping", "format", p.cfg.Format, "status", resp.StatusCode)
	p.turn.Go(func() {
		defer buf.CloseRead()
		// The request's context ends with the response; the last call and
		// the turn's end are published after that.
		sum, err := p.cfg.Client.SubmitStream(context.Background(), turn, parser, buf, p.cfg.TurnOptions)
		switch {
		case buf.Overflowed():
			p.discard(turn, fmt.Sprintf("toolwire proxy: the parser fell more than %d bytes behind the stream", p.cfg.TapBuffer))
		case err != nil && errors.Is(err, errStream):
			log.Warn("stream cut; turn ended with the calls seen so far", "calls", sum.Calls, "err", err)
		case err != nil && sum.Ended:
			// A call refused for its size was answered in its place and the
			// turn ended; discarding it would stop the calls still running.
			log.Warn("a call was not sent; the turn ended with it answered as not run", "calls", sum.Calls, "err", err)
		case err != nil:
			log.Error("publishing the turn failed; discarding it", "calls", len(sum.Uses), "err", err)
			p.discard(turn, "toolwire proxy: publishing the turn failed: "+err.Error())
		default:
			log.Info("turn submitted", "calls", sum.Calls, "stop_reason", sum.StopReason, "stream_err", sum.Err)
		}
	})
}

func (p *Proxy) discard(turn, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), controlTimeout)
	defer cancel()
	if err := p.cfg.Client.Discard(ctx, turn, reason); err != nil {
		p.cfg.Log.Error("discarding the turn failed", "turn", turn, "reason", reason, "err", err)
		return
	}
	p.cfg.Log.Warn("turn discarded", "turn", turn, "reason", reason)
}
