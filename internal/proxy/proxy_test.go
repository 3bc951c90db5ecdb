package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/proxy"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/modelstream/formats"
	"github.com/toolwire/toolwire/modelstream/sse"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// pace is the upstream's pause between two events.
const pace = 30 * time.Millisecond

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "streams", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// answerTool answers every call with a fixed text and its input.
func answerTool(t *testing.T, name string) *tool.Tool {
	t.Helper()
	tl, err := tool.Build(tool.Definition{
		Name:        name,
		Description: "Answers with a fixed text. For testing.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Call: func(_ context.Context, input json.RawMessage, _ tool.TurnContext, _ tool.Progress) (tool.Result, error) {
			return tool.Result{Content: name + " answered " + string(input)}, nil
		},
		ConcurrencySafe: tool.Always,
		ReadOnly:        tool.Always,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// env is a real embedded JetStream with the pipeline's stages on it.
type env struct {
	srv *embedded.Server
	cl  *client.Client
	js  jetstream.JetStream
	// in sees every event published to the in stream: the stream itself
	// keeps an event only until the router has it.
	in   *nats.Subscription
	inNC *nats.Conn
	mu   sync.Mutex
	seen map[string]uint64
}

func newEnv(t *testing.T, srv *embedded.Server) *env {
	t.Helper()
	nc := testenv.Conn(t, srv, "inspect")
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	in, err := nc.SubscribeSync(subjects.Default().InAll())
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, cl: testenv.Client(t, srv), js: js, in: in, inNC: nc, seen: map[string]uint64{}}
}

func startEnv(t *testing.T) *env {
	t.Helper()
	srv := testenv.Server(t)
	reg := testenv.Registry(t,
		answerTool(t, "secret_retrieval_tool"), answerTool(t, "get_current_temperature"), answerTool(t, "get_temperature_date"))
	e := newEnv(t, srv)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: reg, Executors: 2})
	return e
}

// startStreams is startEnv without the stages, for tests that expect
// nothing to be published: only the streams exist.
func startStreams(t *testing.T) *env {
	t.Helper()
	srv := testenv.Server(t)
	e := newEnv(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := provision.Streams(ctx, e.js, subjects.Default(), provision.Config{}); err != nil {
		t.Fatal(err)
	}
	return e
}

// startProxy serves a proxy for upstream; at the test's end it waits for
// the proxy's turns.
func (e *env) startProxy(t *testing.T, upstream, format string, tapBuffer int) (*proxy.Proxy, string) {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	p, err := proxy.New(proxy.Config{Upstream: u, Format: format, Client: e.cl, Log: testLogger(t), TapBuffer: tapBuffer})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(p)
	t.Cleanup(func() {
		ts.Close()
		p.Wait()
	})
	return p, ts.URL
}

// inKinds counts the input events published for a turn, by kind.
func (e *env) inKinds(t *testing.T, turn string) map[string]uint64 {
	t.Helper()
	// What the server delivered before the flush's answer is in the
	// subscription's queue.
	if err := e.inNC.Flush(); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for {
		m, err := e.in.NextMsg(10 * time.Millisecond)
		if err != nil {
			break
		}
		e.seen[m.Subject]++
	}
	prefix := subjects.Default().In(subjects.DefaultTenant, turn, "")
	kinds := map[string]uint64{}
	for subj, n := range e.seen {
		if rest, ok := strings.CutPrefix(subj, prefix); ok {
			kinds[rest] = n
		}
	}
	return kinds
}

// upstreamLog records what the upstream saw and when it finished.
type upstreamLog struct {
	mu       sync.Mutex
	requests int
	uri      string
	host     string
	header   http.Header
	end      time.Time
}

func (l *upstreamLog) seen(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.requests++
	l.uri, l.host, l.header = r.RequestURI, r.Host, r.Header.Clone()
}

func (l *upstreamLog) ended() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.end
}

// replay serves chunks as a streamed response with contentType, flushing
// each and pausing pace between them; cut aborts the connection after the
// chunks instead of ending the response.
func replay(t *testing.T, contentType string, chunks [][]byte, cut bool) (*httptest.Server, *upstreamLog) {
	t.Helper()
	log := &upstreamLog{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.seen(r)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("X-Upstream", "replay")
		w.WriteHeader(http.StatusOK)
		f := w.(http.Flusher)
		for i, c := range chunks {
			if i > 0 {
				time.Sleep(pace)
			}
			if _, err := w.Write(c); err != nil {
				return
			}
			f.Flush()
		}
		if cut {
			time.Sleep(pace)
			panic(http.ErrAbortHandler)
		}
		log.mu.Lock()
		log.end = time.Now()
		log.mu.Unlock()
	}))
	t.Cleanup(ts.Close)
	return ts, log
}

// caller is what an agent does: a request through the proxy, the response
// body read as it streams, the results read by turn id meanwhile.
type caller struct {
	resp      *http.Response
	turn      string
	body      []byte
	bodyErr   error
	firstByte time.Time
	results   []client.Delivery
	done      *schemas.TurnDone
	resultErr error
}

// httpClient sends what a real SDK would (Accept-Encoding: gzip) but does
// not decompress, so the test sees the bytes on the wire.
var httpClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

func call(t *testing.T, cl *client.Client, url string, header http.Header, wantResults bool) *caller {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	for k, vv := range header {
		req.Header[k] = vv
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	c := &caller{resp: resp, turn: resp.Header.Get(proxy.HeaderTurn)}
	var wg sync.WaitGroup
	if wantResults {
		if c.turn == "" {
			t.Fatalf("no %s response header", proxy.HeaderTurn)
		}
		wg.Go(func() {
			for d, err := range cl.Results(ctx, c.turn) {
				if err != nil {
					c.resultErr = err
					return
				}
				if d.Done != nil {
					c.done = d.Done
					return
				}
				c.results = append(c.results, d)
			}
		})
	}
	var body bytes.Buffer
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 && c.firstByte.IsZero() {
			c.firstByte = time.Now()
		}
		body.Write(buf[:n])
		if err != nil {
			if err != io.EOF {
				c.bodyErr = err
			}
			break
		}
	}
	c.body = body.Bytes()
	wg.Wait()
	if c.resultErr != nil {
		t.Fatalf("results of %s: %v", c.turn, c.resultErr)
	}
	return c
}

// checkResults checks that the turn's results are ok, in order, one per
// want, each holding its text.
func (c *caller) checkResults(t *testing.T, name string, want ...string) {
	t.Helper()
	if c.done == nil {
		t.Fatalf("turn %s: no turn_done", c.turn)
	}
	if c.done.Results != len(want) || len(c.results) != len(want) {
		t.Fatalf("turn %s: %d results, turn_done says %d, want %d", c.turn, len(c.results), c.done.Results, len(want))
	}
	for i, d := range c.results {
		r := d.Result
		if r.Seq != i || r.IsError || r.Name != name || !strings.Contains(r.Content, want[i]) {
			t.Errorf("result %d: seq %d name %q error %v content %q; want %s answering %q", i, r.Seq, r.Name, r.IsError, r.Content, name, want[i])
		}
	}
}

func TestProxyAnthropicStream(t *testing.T) {
	data := fixture(t, "anthropic_parallel_tool_use.sse")
	e := startEnv(t)
	up, ulog := replay(t, "text/event-stream; charset=utf-8", sse.Split(data), false)
	_, purl := e.startProxy(t, up.URL+"/base", "anthropic", 0)

	c := call(t, e.cl, purl+"/v1/messages?beta=true&x=a%20b", nil, true)

	if c.resp.StatusCode != http.StatusOK || c.bodyErr != nil {
		t.Fatalf("status %d, body error %v", c.resp.StatusCode, c.bodyErr)
	}
	if !bytes.Equal(c.body, data) {
		t.Fatalf("caller got %d bytes, not the upstream's %d:\n%s", len(c.body), len(data), c.body)
	}
	if err := subjects.CheckToken("turn", c.turn); err != nil {
		t.Fatalf("generated turn id: %v", err)
	}
	if got := c.resp.Header.Get("X-Upstream"); got != "replay" {
		t.Errorf("upstream header X-Upstream = %q", got)
	}
	c.checkResults(t, "secret_retrieval_tool", "mellon", "radiance")
	if ids := []string{c.results[0].Result.ToolUseID, c.results[1].Result.ToolUseID}; ids[0] != "toolu_015cUijgET79LXjgeYQerN2h" || ids[1] != "toolu_01XZTimPexA7h3EVKesnKt5T" {
		t.Errorf("tool_use ids %v", ids)
	}

	// Streamed, not buffered: the caller had the first bytes, and the first
	// result, while the upstream was still writing.
	end := ulog.ended()
	if end.IsZero() {
		t.Fatal("upstream did not record its end")
	}
	if !c.firstByte.Before(end) {
		t.Errorf("first byte reached the caller at %v, after the upstream ended at %v", c.firstByte, end)
	}
	if first := c.results[0].At; !first.Before(end) {
		t.Errorf("first result at %v, after the upstream ended at %v", first, end)
	} else {
		t.Logf("first result %v before the upstream's end", end.Sub(first))
	}

	// The request went upstream with its path and query, the upstream's
	// Host, no turn header, and asking for an uncompressed stream.
	if ulog.uri != "/base/v1/messages?beta=true&x=a%20b" {
		t.Errorf("upstream request URI %q", ulog.uri)
	}
	if want := strings.TrimPrefix(up.URL, "http://"); ulog.host != want {
		t.Errorf("upstream Host %q, want %q", ulog.host, want)
	}
	if v := ulog.header.Values(proxy.HeaderTurn); len(v) != 0 {
		t.Errorf("turn header forwarded upstream: %v", v)
	}
	if v := ulog.header.Get("Accept-Encoding"); v != "identity" {
		t.Errorf("upstream Accept-Encoding %q, want identity", v)
	}
	if k := e.inKinds(t, c.turn); k["use"] != 2 || k["end"] != 1 || k["discard"] != 0 {
		t.Errorf("published for the turn: %v", k)
	}
}

func TestProxyGeminiStreamWithGivenTurn(t *testing.T) {
	data := fixture(t, "gemini_parallel_function_calls.sse")
	e := startEnv(t)
	up, _ := replay(t, "text/event-stream", sse.Split(data), false)
	_, purl := e.startProxy(t, up.URL, "gemini", 0)

	const turn = "gemini-turn_1"
	c := call(t, e.cl, purl+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", http.Header{proxy.HeaderTurn: {turn}}, true)

	if c.turn != turn {
		t.Fatalf("response turn %q, want the given %q", c.turn, turn)
	}
	if c.resp.StatusCode != http.StatusOK || c.bodyErr != nil || !bytes.Equal(c.body, data) {
		t.Fatalf("status %d, body error %v, %d bytes of %d (identical: %v)", c.resp.StatusCode, c.bodyErr, len(c.body), len(data), bytes.Equal(c.body, data))
	}
	c.checkResults(t, "secret_retrieval_tool", "mellon", "radiance")
}

func TestProxyOpenAIResponsesStream(t *testing.T) {
	if _, err := formats.Parser("openai-responses"); err != nil {
		t.Skip(err)
	}
	data := fixture(t, "openai_responses_parallel_function_calls.sse")
	e := startEnv(t)
	up, _ := replay(t, "text/event-stream; charset=utf-8", sse.Split(data), false)
	_, purl := e.startProxy(t, up.URL, "openai-responses", 0)

	c := call(t, e.cl, purl+"/v1/responses", nil, true)

	if c.resp.StatusCode != http.StatusOK || c.bodyErr != nil || !bytes.Equal(c.body, data) {
		t.Fatalf("status %d, body error %v, %d bytes of %d", c.resp.StatusCode, c.bodyErr, len(c.body), len(data))
	}
	c.checkResults(t, "secret_retrieval_tool", "mellon", "radiance")
}

func TestProxyHermesTextStream(t *testing.T) {
	data := fixture(t, "hermes_qwen25_two_calls.txt")
	e := startEnv(t)
	var chunks [][]byte
	for i := 0; i < len(data); i += 16 {
		chunks = append(chunks, data[i:min(i+16, len(data))])
	}
	up, _ := replay(t, "text/plain; charset=utf-8", chunks, false)
	_, purl := e.startProxy(t, up.URL, "hermes", 0)

	c := call(t, e.cl, purl+"/generate", nil, true)

	if c.resp.StatusCode != http.StatusOK || c.bodyErr != nil || !bytes.Equal(c.body, data) {
		t.Fatalf("status %d, body error %v, %d bytes of %d", c.resp.StatusCode, c.bodyErr, len(c.body), len(data))
	}
	if c.done == nil || c.done.Results != 2 || len(c.results) != 2 {
		t.Fatalf("results %d, done %+v", len(c.results), c.done)
	}
	for i, name := range []string{"get_current_temperature", "get_temperature_date"} {
		if r := c.results[i].Result; r.Name != name || r.IsError || !strings.Contains(r.Content, "San Francisco") {
			t.Errorf("result %d: %+v", i, r)
		}
	}
}

// TestProxyUpstreamCutMidStream: the upstream dies after the first call is
// complete. The caller sees the same cut; the turn ends with that call.
func TestProxyUpstreamCutMidStream(t *testing.T) {
	data := fixture(t, "anthropic_parallel_tool_use.sse")
	chunks := sse.Split(data)
	n := 0
	for i, c := range chunks {
		if bytes.Contains(c, []byte(`"content_block_stop","index":1`)) {
			n = i + 1
		}
	}
	if n == 0 {
		t.Fatal("fixture has no content_block_stop for index 1")
	}
	e := startEnv(t)
	up, _ := replay(t, "text/event-stream", chunks[:n], true)
	_, purl := e.startProxy(t, up.URL, "anthropic", 0)

	c := call(t, e.cl, purl+"/v1/messages", nil, true)

	if c.bodyErr == nil {
		t.Error("the caller read a clean end of a stream the upstream cut")
	}
	if want := bytes.Join(chunks[:n], nil); !bytes.Equal(c.body, want) {
		t.Errorf("caller got %d bytes, want the %d the upstream sent", len(c.body), len(want))
	}
	c.checkResults(t, "secret_retrieval_tool", "mellon")
	if k := e.inKinds(t, c.turn); k["use"] != 1 || k["end"] != 1 || k["discard"] != 0 {
		t.Errorf("published for the turn: %v", k)
	}
}

// TestProxyTapOverflowDiscards: a parser that falls behind (here: a tap
// buffer smaller than one event) never slows or changes the caller's
// stream; the turn is discarded.
func TestProxyTapOverflowDiscards(t *testing.T) {
	data := fixture(t, "anthropic_parallel_tool_use.sse")
	e := startEnv(t)
	up, _ := replay(t, "text/event-stream", sse.Split(data), false)
	p, purl := e.startProxy(t, up.URL, "anthropic", 64)

	c := call(t, e.cl, purl+"/v1/messages", nil, true)

	if c.resp.StatusCode != http.StatusOK || c.bodyErr != nil || !bytes.Equal(c.body, data) {
		t.Fatalf("status %d, body error %v, %d bytes of %d", c.resp.StatusCode, c.bodyErr, len(c.body), len(data))
	}
	if c.done == nil || c.done.Results != 0 || len(c.results) != 0 {
		t.Fatalf("results %d, done %+v; want none", len(c.results), c.done)
	}
	p.Wait()
	if k := e.inKinds(t, c.turn); k["discard"] != 1 || k["use"] != 0 {
		t.Errorf("published for the turn: %v; want a discard and no call", k)
	}
}

func TestProxyPassThrough(t *testing.T) {
	e := startStreams(t)
	nonStreaming := `{"id":"msg_01","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"secret_retrieval_tool","input":{"password":"mellon"}}],"stop_reason":"tool_use"}`
	for _, c := range []struct {
		name, contentType, body string
		status                  int
		turn                    string
	}{
		{"upstream 500", "application/json", `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`, 500, ""},
		{"upstream 429 as sse", "text/event-stream", "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\"}}\n\n", 429, "given-429"},
		{"non-streaming json", "application/json", nonStreaming, 200, "given-json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ulog := &upstreamLog{}
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ulog.seen(r)
				w.Header().Set("Content-Type", c.contentType)
				w.Header().Set("Request-Id", "req_42")
				w.Header().Set("Content-Length", itoa(len(c.body)))
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			}))
			defer up.Close()
			p, purl := e.startProxy(t, up.URL, "anthropic", 0)
			var h http.Header
			if c.turn != "" {
				h = http.Header{proxy.HeaderTurn: {c.turn}}
			}

			got := call(t, e.cl, purl+"/v1/messages", h, false)

			if got.resp.StatusCode != c.status || got.bodyErr != nil || string(got.body) != c.body {
				t.Fatalf("status %d (want %d), body error %v, body %q", got.resp.StatusCode, c.status, got.bodyErr, got.body)
			}
			for _, k := range []string{"Content-Type", "Request-Id", "Content-Length"} {
				if g, w := got.resp.Header.Get(k), map[string]string{"Content-Type": c.contentType, "Request-Id": "req_42", "Content-Length": itoa(len(c.body))}[k]; g != w {
					t.Errorf("header %s = %q, want %q", k, g, w)
				}
			}
			turn := got.turn
			if c.turn != "" && turn != c.turn {
				t.Errorf("turn %q, want the given %q", turn, c.turn)
			}
			if err := subjects.CheckToken("turn", turn); err != nil {
				t.Errorf("response turn header: %v", err)
			}
			if ulog.requests != 1 {
				t.Errorf("upstream got %d requests, want 1", ulog.requests)
			}
			p.Wait()
			if k := e.inKinds(t, turn); len(k) != 0 {
				t.Errorf("published for a pass-through response: %v", k)
			}
		})
	}
}

func TestProxyUpstreamUnreachable(t *testing.T) {
	e := startStreams(t)
	up := httptest.NewServer(http.NotFoundHandler())
	addr := up.URL
	up.Close()
	_, purl := e.startProxy(t, addr, "anthropic", 0)
	c := call(t, e.cl, purl+"/v1/messages", nil, false)
	if c.resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d, want 502", c.resp.StatusCode)
	}
	if c.turn == "" {
		t.Errorf("no %s header on the proxy's own error", proxy.HeaderTurn)
	}
}

func TestProxyBadTurnHeader(t *testing.T) {
	e := startStreams(t)
	ulog := &upstreamLog{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ulog.seen(r) }))
	defer up.Close()
	_, purl := e.startProxy(t, up.URL, "anthropic", 0)
	for _, h := range []http.Header{
		{proxy.HeaderTurn: {"bad turn!"}},
		{proxy.HeaderTurn: {"a.b"}},
		{proxy.HeaderTurn: {strings.Repeat("x", 129)}},
		{proxy.HeaderTurn: {"one", "two"}},
	} {
		c := call(t, e.cl, purl+"/v1/messages", h, false)
		if c.resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(c.body), proxy.HeaderTurn) {
			t.Errorf("%v: status %d, body %q; want 400 naming the header", h, c.resp.StatusCode, c.body)
		}
	}
	if ulog.requests != 0 {
		t.Errorf("upstream got %d requests", ulog.requests)
	}
}

func TestNewChecksConfig(t *testing.T) {
	e := startStreams(t)
	u, _ := url.Parse("http://127.0.0.1:1")
	for name, cfg := range map[string]proxy.Config{
		"no upstream":    {Format: "anthropic", Client: e.cl},
		"ftp upstream":   {Upstream: &url.URL{Scheme: "ftp", Host: "x"}, Format: "anthropic", Client: e.cl},
		"unknown format": {Upstream: u, Format: "nope", Client: e.cl},
		"no client":      {Upstream: u, Format: "anthropic"},
	} {
		if _, err := proxy.New(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// testLogger writes the proxy's log to the test's.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(logWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// TestProxyRequestBodyAfterResponseStarts: an upstream that starts its
// response before it has read the whole request still gets the whole
// request (the proxy runs its HTTP/1 side full duplex).
func TestProxyRequestBodyAfterResponseStarts(t *testing.T) {
	e := startStreams(t)
	reqBody := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // 128 KiB
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		got, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, `{"read":%d,"equal":%v,"err":%q}`, len(got), bytes.Equal(got, reqBody), fmt.Sprint(err))
	}))
	defer up.Close()
	_, purl := e.startProxy(t, up.URL, "anthropic", 0)
	for range 5 {
		resp, err := httpClient.Post(purl+"/v1/messages", "application/json", bytes.NewReader(reqBody))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := fmt.Sprintf(`{"read":%d,"equal":true,"err":"<nil>"}`, len(reqBody)); err != nil || string(got) != want {
			t.Fatalf("upstream answered %q (%v), want %q", got, err, want)
		}
	}
}

// TestProxyCallOverMaxPayload: a call too large for the server's
// max_payload is answered in its place by the client and the turn ends
// with it; the proxy must not discard the turn for it, which would stop
// the calls still running.
func TestProxyCallOverMaxPayload(t *testing.T) {
	const maxPayload = 256 << 10
	srv := testenv.ServerWith(t, embedded.Options{MaxPayload: maxPayload})
	e := newEnv(t, srv)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, answerTool(t, "secret_retrieval_tool"))})

	stream := testenv.AnthropicStream("msg_big",
		testenv.ToolBlock{ID: "toolu_0", Name: "secret_retrieval_tool", Args: `{"q":"small"}`},
		testenv.ToolBlock{ID: "toolu_1", Name: "secret_retrieval_tool", Args: `{"q":"` + strings.Repeat("x", maxPayload+(10<<10)) + `"}`})
	up, _ := replay(t, "text/event-stream", sse.Split([]byte(stream)), false)
	p, purl := e.startProxy(t, up.URL, "anthropic", 0)

	c := call(t, e.cl, purl+"/v1/messages", nil, true)
	p.Wait() // the turn's publishing, and any discard, is over

	if c.done == nil || len(c.results) != 2 {
		t.Fatalf("turn %s: %d results, done %v", c.turn, len(c.results), c.done)
	}
	if r := c.results[0].Result; r.IsError || !strings.Contains(r.Content, "small") {
		t.Errorf("small call: %+v", *r)
	}
	if r := c.results[1].Result; !r.IsError || !strings.Contains(r.Content, "too large to send") {
		t.Errorf("big call: %+v", *r)
	}
	if k := e.inKinds(t, c.turn); k["use"] != 2 || k["end"] != 1 || k["discard"] != 0 {
		t.Errorf("published for the turn: %v", k)
	}
}
