package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/httpapi"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
	"github.com/toolwire/toolwire/tool/permission"
	"github.com/toolwire/toolwire/tool/testtools"
)

// testTimeout bounds every wait of a test: generous, the machine is shared.
const testTimeout = 60 * time.Second

// options shape one test's pipeline and API.
type options struct {
	tokens   map[string]string
	policy   *permission.Policy
	api      func(*httpapi.Config)
	listener func(net.Listener) net.Listener
	// maxPending, when set, runs no stages: only the streams, whose in
	// stream holds at most this many events (nothing drains it).
	maxPending int
}

// env is a served pipeline on a real embedded server with the API in
// front, and an HTTP client that checks every request and response
// against the OpenAPI document.
type env struct {
	t      *testing.T
	url    string
	client *http.Client
	doc    *openapi3.T
	router routers.Router
	tools  func(tool.Format) ([]byte, error)
}

func newEnv(t *testing.T, o options) *env {
	t.Helper()
	srv := testenv.Server(t)
	reg := testenv.Registry(t, append(builtin.Tools(), testtools.Tools()...)...)
	if o.maxPending > 0 {
		js := testenv.JS(t, srv, "provision")
		if err := provision.Streams(context.Background(), js, subjects.Default(), provision.Config{MaxPending: o.maxPending}); err != nil {
			t.Fatal(err)
		}
	} else {
		testenv.Pipeline(t, srv, pipeline.Config{
			Tools: reg, Executors: 2, WorkDir: t.TempDir(),
			Executor: executor.Config{Policy: o.policy, ApprovalTimeout: 2 * testTimeout},
		})
	}
	entries := make([]tool.Entry, 0)
	for _, tl := range reg.Tools() {
		entries = append(entries, tool.Entry{Tool: tl})
	}
	render := func(f tool.Format) ([]byte, error) { return tool.Render(f, entries) }
	cfg := httpapi.Config{Conn: testenv.Conn(t, srv, "api"), Space: subjects.Default(), Tokens: o.tokens, Tools: render}
	if o.api != nil {
		o.api(&cfg)
	}
	api, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(api)
	if o.listener != nil {
		ts.Listener = o.listener(ts.Listener)
	}
	ts.Start()
	t.Cleanup(func() {
		api.CloseStreams()
		ts.Close()
	})
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(schemas.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("the OpenAPI document does not validate: %v", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, url: ts.URL, doc: doc, router: router, tools: render}
	e.client = &http.Client{Transport: &checking{e: e, base: ts.Client().Transport}}
	return e
}

// invalidKey marks a request a test sends wrong on purpose: its response
// is checked, the request is not.
type invalidKey struct{}

// checking is a RoundTripper that validates each request and response
// against the document. An event stream's body is checked event by event
// as the test reads it (readSSE).
type checking struct {
	e    *env
	base http.RoundTripper
}

func (c *checking) RoundTrip(req *http.Request) (*http.Response, error) {
	t := c.e.t
	route, params, findErr := c.e.router.FindRoute(req)
	invalid, _ := req.Context().Value(invalidKey{}).(bool)
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, SkipSettingDefaults: true}
	var in *openapi3filter.RequestValidationInput
	if findErr == nil {
		in = &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
		body, restore := bufferBody(t, req)
		if body == nil && req.Body != nil {
			// A streamed upload is read by the server as it comes: its
			// parameters and headers are checked, not its body (which the
			// security check would read whole).
			o := *opts
			o.ExcludeRequestBody = true
			in.Options = &o
			in.Request = req.Clone(req.Context())
			in.Request.Body = http.NoBody
		}
		err := openapi3filter.ValidateRequest(req.Context(), in)
		restore()
		if err != nil && !invalid {
			t.Errorf("request %s %s does not validate against the OpenAPI document: %v", req.Method, req.URL, err)
		}
	} else if !invalid {
		t.Errorf("request %s %s is not in the OpenAPI document: %v", req.Method, req.URL, findErr)
	}
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if in == nil {
		// No route: the answer must still be a problem document.
		b, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(bytes.NewReader(b))
		c.e.checkSchema("Problem", b)
		return resp, nil
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Options: opts}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		o := *opts
		o.ExcludeResponseBody = true
		out.Options = &o
		out.Body = io.NopCloser(strings.NewReader(""))
	} else {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		resp.Body = io.NopCloser(bytes.NewReader(b))
		out.Body = io.NopCloser(bytes.NewReader(b))
	}
	if err := openapi3filter.ValidateResponse(req.Context(), out); err != nil {
		t.Errorf("response %d to %s %s does not validate against the OpenAPI document: %v", resp.StatusCode, req.Method, req.URL, err)
	}
	return resp, nil
}

// bufferBody reads a request body that can be read again (bytes, strings)
// and returns how to put it back; nil for a streamed body.
func bufferBody(t *testing.T, req *http.Request) ([]byte, func()) {
	if req.Body == nil || req.GetBody == nil {
		return nil, func() {}
	}
	b, err := io.ReadAll(req.Body)
	if err != nil {
		t.Fatal(err)
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	return b, func() { req.Body = io.NopCloser(bytes.NewReader(b)) }
}

// checkSchema validates a JSON document against a component schema.
func (e *env) checkSchema(name string, data []byte) {
	e.t.Helper()
	ref, ok := e.doc.Components.Schemas[name]
	if !ok {
		e.t.Fatalf("no schema %s in the OpenAPI document", name)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		e.t.Errorf("%s is not JSON: %v: %q", name, err, data)
		return
	}
	if err := ref.Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		e.t.Errorf("%s does not validate against the OpenAPI document: %v: %s", name, err, data)
	}
}

// req sends a request; body may be nil, a string or an io.Reader
// (streamed, chunked).
func (e *env) req(ctx context.Context, method, path, token string, body any, hdr ...string) *http.Response {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case string:
		r = strings.NewReader(b)
	case io.Reader:
		r = b
	}
	req, err := http.NewRequestWithContext(ctx, method, e.url+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if s, ok := body.(string); ok && strings.HasPrefix(s, "{") {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1] // the client sends req.Host, not a Host header
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// status reads a response whole and checks its status.
func (e *env) status(resp *http.Response, want int) []byte {
	e.t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, want, b)
	}
	return b
}

// invalid marks ctx's requests as wrong on purpose.
func invalid(ctx context.Context) context.Context { return context.WithValue(ctx, invalidKey{}, true) }

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// event is one server-sent event.
type event struct {
	ID, Name string
	Data     []byte
	At       time.Time
}

// sseReader reads an event stream, checking each event's data against its
// schema in the document.
type sseReader struct {
	e        *env
	body     io.ReadCloser
	events   chan event
	mu       sync.Mutex
	comments int
	err      error
}

// eventSchemas name the schema of each event's data.
var eventSchemas = map[string]string{"result": "Result", "done": "Done", "approval": "ApprovalRequest"}

func (e *env) readSSE(resp *http.Response) *sseReader {
	e.t.Helper()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("not an event stream: %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	r := &sseReader{e: e, body: resp.Body, events: make(chan event, 1024)}
	go r.run()
	return r
}

func (r *sseReader) run() {
	defer close(r.events)
	sc := bufio.NewScanner(r.body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var ev event
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.Name != "" {
				ev.At = time.Now()
				r.events <- ev
			}
			ev = event{}
		case strings.HasPrefix(line, ":"):
			r.mu.Lock()
			r.comments++
			r.mu.Unlock()
		case strings.HasPrefix(line, "id: "):
			ev.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.Data = append(ev.Data, strings.TrimPrefix(line, "data: ")...)
		}
	}
	r.mu.Lock()
	r.err = sc.Err()
	r.mu.Unlock()
}

// next returns the next event, checked against its schema; ok is false
// once the stream has ended.
func (r *sseReader) next(ctx context.Context) (event, bool) {
	r.e.t.Helper()
	select {
	case ev, ok := <-r.events:
		if ok {
			name, known := eventSchemas[ev.Name]
			if !known {
				r.e.t.Errorf("unknown event %q", ev.Name)
			} else {
				r.e.checkSchema(name, ev.Data)
			}
		}
		return ev, ok
	case <-ctx.Done():
		r.e.t.Fatalf("no event in time: %v", ctx.Err())
		return event{}, false
	}
}

// all reads events until the stream ends, which it must after done.
func (r *sseReader) all(ctx context.Context) []event {
	r.e.t.Helper()
	var evs []event
	for {
		ev, ok := r.next(ctx)
		if !ok {
			return evs
		}
		evs = append(evs, ev)
	}
}

func (r *sseReader) close() { r.body.Close() }

// result decodes a result event.
func result(t *testing.T, ev event) schemas.ResultView {
	t.Helper()
	if ev.Name != "result" {
		t.Fatalf("event %q, want result: %s", ev.Name, ev.Data)
	}
	var v schemas.ResultView
	if err := json.Unmarshal(ev.Data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// callsBody is a POST /calls body of Noop calls with the given inputs.
func callsBody(firstSeq int, end bool, inputs ...string) string {
	type call struct {
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	b := struct {
		Calls    []call `json:"calls"`
		FirstSeq int    `json:"first_seq,omitempty"`
		End      bool   `json:"end"`
	}{FirstSeq: firstSeq, End: end}
	for i, in := range inputs {
		b.Calls = append(b.Calls, call{ID: "toolu_" + string(rune('a'+firstSeq+i)), Name: "Noop", Input: json.RawMessage(in)})
	}
	out, _ := json.Marshal(b)
	return string(out)
}
