package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolwire/toolwire/tool"
)

// Supervision timings; variables so that tests can shorten them.
var (
	// backoffMin and backoffMax bound the delay before a restart: it starts
	// at backoffMin and doubles with every failed attempt (and with every
	// session that dies within stableAfter of its start) up to backoffMax.
	backoffMin = 100 * time.Millisecond
	backoffMax = 30 * time.Second
	// stableAfter is how long a session must have lived for its death to
	// restart the back-off at backoffMin.
	stableAfter = 10 * time.Second
	// downWait is how long a call that arrives while the server is down
	// waits for the restart before it gets an error result. A call to an
	// HTTP server waits instead for one connection attempt of its own, and
	// so is answered at once when the server refuses connections.
	downWait = 5 * time.Second
	// reasonWait is how long a call whose request failed waits to learn
	// whether the session died (the process's exit is reaped just after the
	// pending calls are failed).
	reasonWait = 2 * time.Second
)

// JSON-RPC codes of the SDK's own errors (internal/jsonrpc2, not exported).
const (
	// codeRejected is given to a request a transport refused to send or
	// that got an HTTP error status (ErrRejected).
	codeRejected = -32005
	// codeClientClosing and codeServerClosing are given to the calls of a
	// connection that is closing (ErrClientClosing, ErrServerClosing): the
	// session ended, the server did not answer.
	codeClientClosing = -32003
	codeServerClosing = -32004
)

// Server is a connected, supervised MCP server. When its process or
// session dies, the calls in flight get an error result and the server is
// restarted in the background with exponential back-off until Close.
type Server struct {
	cfg    ServerConfig
	log    *slog.Logger
	client *mcpsdk.Client

	tools []*tool.Tool
	infos []ToolInfo

	ctx    context.Context // the server's lifetime; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	cur     *session      // the live session, nil while down
	up      chan struct{} // closed when a session is installed; replaced when it dies
	tried   chan struct{} // closed when a restart attempt fails; replaced then
	downFor string        // why the server is down
	closed  bool
	delay   time.Duration // the next restart's delay

	kick chan struct{} // makes the restart loop try now rather than after its delay

	progress sync.Map // progress token → tool.Progress
	tokens   atomic.Int64
	// restarts counts the sessions installed after the first.
	restarts atomic.Int64
}

// session is one connection to the server (one process for stdio).
type session struct {
	cs      *mcpsdk.ClientSession
	started time.Time
	lost    *lost         // reports an HTTP server found unreachable
	done    chan struct{} // closed when the session has ended
	reason  string        // why it ended; written before done is closed
}

// Connect starts (stdio) or connects to (streamable HTTP) the server, lists
// its tools (every page) and builds them. A server that cannot be reached
// here is an error; restarts happen only for a server that was up once.
// log may be nil.
func Connect(ctx context.Context, cfg ServerConfig, log *slog.Logger) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("mcp_server", cfg.Name)
	s := &Server{cfg: cfg, log: log, up: make(chan struct{}), tried: make(chan struct{}), kick: make(chan struct{}, 1), delay: backoffMin}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.client = mcpsdk.NewClient(&mcpsdk.Implementation{Name: "toolwire", Version: "1"}, &mcpsdk.ClientOptions{
		ProgressNotificationHandler: s.onProgress,
		LoggingMessageHandler: func(_ context.Context, req *mcpsdk.LoggingMessageRequest) {
			log.Debug("mcp: server log", "level", req.Params.Level, "logger", req.Params.Logger, "data", req.Params.Data)
		},
	})
	sess, err := s.dial(ctx)
	if err != nil {
		s.cancel()
		return nil, fmt.Errorf("mcp: server %s (%s): %w", cfg.Name, cfg.describe(), err)
	}
	var listed []*mcpsdk.Tool
	for t, err := range sess.cs.Tools(ctx, nil) {
		if err != nil {
			s.mu.Lock()
			s.closed = true
			s.mu.Unlock()
			s.cancel()
			_ = sess.cs.Close()
			s.wg.Wait()
			return nil, fmt.Errorf("mcp: server %s: listing tools: %w", cfg.Name, err)
		}
		listed = append(listed, t)
	}
	s.tools, s.infos = s.build(listed)
	s.install(sess)
	log.Info("mcp: server connected", "endpoint", cfg.describe(), "tools", len(s.tools))
	return s, nil
}

// Name is the server's configured name.
func (s *Server) Name() string { return s.cfg.Name }

// Tools are the server's tools as listed at Connect, in listing order.
func (s *Server) Tools() []*tool.Tool { return append([]*tool.Tool(nil), s.tools...) }

// Infos describe the tools Tools returns, in the same order.
func (s *Server) Infos() []ToolInfo { return append([]ToolInfo(nil), s.infos...) }

// Info describes the tool of the given toolwire name.
func (s *Server) Info(name string) (ToolInfo, bool) {
	for _, i := range s.infos {
		if i.Name == name {
			return i, true
		}
	}
	return ToolInfo{}, false
}

// Running reports whether a session is up.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur != nil
}

// Restarts counts the times the server was restarted after its process
// or session died (each restart that brought it up, not each attempt).
func (s *Server) Restarts() int64 { return s.restarts.Load() }

// Down says why the server is not running: nil while a session is up.
func (s *Server) Down() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return fmt.Errorf("MCP server %s is closed", s.cfg.Name)
	case s.cur == nil:
		return errors.New(s.notRunning(s.downFor))
	}
	return nil
}

// Close stops the server: restarts end, calls in flight are cancelled and
// get an error result, a stdio server's stdin is closed (then its whole
// process group gets SIGTERM and SIGKILL if it does not exit). It is safe
// to call more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	cur := s.cur
	s.cur = nil
	s.mu.Unlock()
	s.cancel()
	var err error
	if cur != nil {
		err = cur.cs.Close()
	}
	s.wg.Wait()
	s.log.Info("mcp: server closed")
	if isExit(err) {
		// Stopping a server by closing its stdin may well end it with a
		// status; that is not a failure of Close.
		err = nil
	}
	return err
}

// dial opens one session.
func (s *Server) dial(ctx context.Context) (*session, error) {
	stderr := newStderrTail(s.log)
	lost := newLost()
	cs, err := s.client.Connect(ctx, s.cfg.transport(stderr, lost), nil)
	if err != nil {
		if tail := stderr.last(); tail != "" {
			err = fmt.Errorf("%w (stderr: %s)", err, tail)
		}
		return nil, err
	}
	sess := &session{cs: cs, started: time.Now(), lost: lost, done: make(chan struct{})}
	s.wg.Add(1)
	go s.watch(sess, stderr)
	return sess, nil
}

// install makes sess the live session, unless the server was closed
// meanwhile (sess is closed) or sess has already died (a restart begins:
// its watcher found it not installed and left the restart to us). It
// reports whether sess became the live session.
func (s *Server) install(sess *session) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = sess.cs.Close()
		return false
	}
	select {
	case <-sess.done:
		s.downFor = sess.reason
		s.wg.Add(1)
		s.mu.Unlock()
		s.log.Warn("mcp: server stopped as it started; restarting", "reason", sess.reason)
		go s.restart()
		return false
	default:
	}
	s.cur, s.downFor = sess, ""
	close(s.up)
	select {
	case <-s.kick: // a leftover must not skip the next outage's first delay
	default:
	}
	s.mu.Unlock()
	return true
}

// watch waits for sess to end, or for its HTTP server to be found
// unreachable (which ends it), records why, and starts the restart.
func (s *Server) watch(sess *session, stderr *stderrTail) {
	defer s.wg.Done()
	waited := make(chan error, 1)
	go func() { waited <- sess.cs.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-sess.lost.done:
		err = sess.lost.err
	}
	// Close stops a stdio server's processes (the leader's exit status
	// becomes the error when there was none) and the session's keepalive
	// and listeners.
	if cerr := sess.cs.Close(); err == nil {
		err = cerr
	}
	sess.reason = stopReason(err, stderr.last(), s.cfg.URL != "")
	close(sess.done)

	s.mu.Lock()
	if s.cur != sess || s.closed {
		s.mu.Unlock()
		return
	}
	s.cur, s.downFor, s.up = nil, sess.reason, make(chan struct{})
	if time.Since(sess.started) >= stableAfter {
		s.delay = backoffMin
	}
	s.wg.Add(1)
	s.mu.Unlock()
	s.log.Warn("mcp: server stopped; restarting", "reason", sess.reason, "uptime", time.Since(sess.started).Round(time.Millisecond))
	go s.restart()
}

// restart reconnects with exponential back-off until it succeeds or the
// server is closed.
func (s *Server) restart() {
	defer s.wg.Done()
	for attempt := 1; ; attempt++ {
		s.mu.Lock()
		delay := s.delay
		s.delay = min(s.delay*2, backoffMax)
		s.mu.Unlock()
		t := time.NewTimer(delay)
		select {
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-s.kick:
			t.Stop()
		}
		ctx, cancel := context.WithTimeout(s.ctx, connectTimeout)
		sess, err := s.dial(ctx)
		cancel()
		if err == nil {
			if s.install(sess) {
				s.restarts.Add(1)
				s.log.Info("mcp: server restarted", "attempt", attempt)
			}
			return
		}
		if s.ctx.Err() != nil {
			return
		}
		if unreachable(err) {
			err = netError(err)
		}
		s.mu.Lock()
		s.downFor = err.Error()
		close(s.tried)
		s.tried = make(chan struct{})
		s.mu.Unlock()
		s.log.Warn("mcp: restart failed", "attempt", attempt, "err", err)
	}
}

// notRunning is the text of a call that found the server down.
func (s *Server) notRunning(reason string) string {
	if reason == "" {
		return fmt.Sprintf("MCP server %s is not running (restarting)", s.cfg.Name)
	}
	return fmt.Sprintf("MCP server %s is not running (restarting): %s", s.cfg.Name, reason)
}

// session returns the live session, waiting up to downWait for a restart.
// For an HTTP server it asks for a connection attempt at once, and returns
// when that attempt fails: trying costs a request, and a server that
// refuses connections is answered for without waiting out the back-off.
// The text is the error result for a call that cannot run; both are empty
// when ctx ended first.
func (s *Server) session(ctx context.Context) (*session, string) {
	t := time.NewTimer(downWait)
	defer t.Stop()
	for {
		s.mu.Lock()
		cur, up, tried, closed := s.cur, s.up, s.tried, s.closed
		s.mu.Unlock()
		switch {
		case closed:
			return nil, fmt.Sprintf("MCP server %s is closed", s.cfg.Name)
		case cur != nil:
			return cur, ""
		}
		if s.cfg.URL != "" {
			select {
			case s.kick <- struct{}{}:
			default: // an attempt is asked for already
			}
		} else {
			tried = nil // a stdio restart starts processes: keep the back-off
		}
		select {
		case <-up:
		case <-tried:
			s.mu.Lock()
			reason := s.downFor
			s.mu.Unlock()
			return nil, s.notRunning(reason)
		case <-ctx.Done():
			return nil, ""
		case <-s.ctx.Done():
			return nil, fmt.Sprintf("MCP server %s is closed", s.cfg.Name)
		case <-t.C:
			s.mu.Lock()
			reason := s.downFor
			s.mu.Unlock()
			return nil, s.notRunning(reason)
		}
	}
}

// call runs one tool call on the live session. The call's idempotency key,
// when set, goes in the request's _meta (tool.IdempotencyMeta), where a
// server with side effects can find it; the model's arguments stay as
// they are.
func (s *Server) call(ctx context.Context, info ToolInfo, input json.RawMessage, key string, progress tool.Progress) (tool.Result, error) {
	sess, text := s.session(ctx)
	if sess == nil {
		if text == "" {
			return tool.Result{}, ctx.Err()
		}
		return tool.Result{IsError: true, Content: text}, nil
	}
	args := json.RawMessage(`{}`)
	if len(strings.TrimSpace(string(input))) > 0 && string(input) != "null" {
		args = input
	}
	params := &mcpsdk.CallToolParams{Name: info.MCPName, Arguments: args}
	if key != "" {
		params.Meta = mcpsdk.Meta{tool.IdempotencyMeta: key}
	}
	if progress != nil {
		token := "toolwire-" + strconv.FormatInt(s.tokens.Add(1), 10)
		params.SetProgressToken(token)
		s.progress.Store(token, progress)
		defer s.progress.Delete(token)
	}
	// Close cancels the calls in flight.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()

	res, err := sess.cs.CallTool(cctx, params)
	if err == nil {
		return mapResult(res), nil
	}
	switch {
	case ctx.Err() != nil:
		// The executor's timeout or the turn's cancellation: it knows why.
		return tool.Result{}, err
	case s.ctx.Err() != nil:
		return tool.Result{IsError: true, Content: fmt.Sprintf("MCP server %s was closed while the call was running", s.cfg.Name)}, nil
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		// The HTTP request did not reach the server: the call did not run.
		// A refused connection ends the session too (lostTransport); other
		// failures may pass, and a restarted server ends it with "session
		// not found".
		return tool.Result{IsError: true, Content: fmt.Sprintf("MCP server %s could not be reached (%v)", s.cfg.Name, uerr)}, nil
	}
	var werr *jsonrpc.Error
	if errors.As(err, &werr) && werr.Code != codeClientClosing && werr.Code != codeServerClosing {
		text := werr.Message
		if werr.Code == codeRejected {
			// The transport refused the request (an HTTP error status):
			// the whole chain says more than the code's name.
			text = err.Error()
		}
		// The server answered with a protocol error (unknown tool, bad
		// arguments, ...) or refused the request: the session is fine. (A
		// closing connection's codes mean the session ended instead.)
		return tool.Result{IsError: true, Content: fmt.Sprintf("MCP server %s, tool %s: %s", s.cfg.Name, info.MCPName, text)}, nil
	}
	// The connection failed under the call. Whether the server is gone
	// decides the answer; a stdio session ends as its process exits, an
	// HTTP one is asked (a refused ping ends it, see lostTransport).
	deadline := time.Now().Add(reasonWait)
	if s.cfg.URL != "" && !isClosed(sess.lost.done) {
		pctx, cancel := context.WithDeadline(ctx, deadline)
		perr := sess.cs.Ping(pctx, nil)
		cancel()
		if perr == nil {
			return tool.Result{IsError: true, Content: fmt.Sprintf("MCP server %s, tool %s: the call failed: %v", s.cfg.Name, info.MCPName, err)}, nil
		}
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-sess.done:
		return tool.Result{IsError: true, Content: fmt.Sprintf("MCP server %s stopped while the call was running (%s)", s.cfg.Name, sess.reason)}, nil
	case <-ctx.Done():
		return tool.Result{}, ctx.Err()
	case <-t.C:
	}
	return tool.Result{IsError: true, Content: fmt.Sprintf("MCP server %s, tool %s: the call failed: %v", s.cfg.Name, info.MCPName, err)}, nil
}

// onProgress forwards a progress notification to the call it belongs to.
func (s *Server) onProgress(_ context.Context, req *mcpsdk.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	fn, ok := s.progress.Load(token)
	if !ok {
		return
	}
	fn.(tool.Progress)(progressText(p))
}

func progressText(p *mcpsdk.ProgressNotificationParams) string {
	var count string
	switch {
	case p.Total > 0:
		count = fmt.Sprintf("%g/%g", p.Progress, p.Total)
	case p.Progress > 0:
		count = fmt.Sprintf("%g", p.Progress)
	}
	switch {
	case p.Message != "" && count != "":
		return p.Message + " (" + count + ")"
	case p.Message != "":
		return p.Message
	}
	return count
}
