package main

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/tracing"
	"github.com/toolwire/toolwire/subjects"
	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is a minimal OTLP/HTTP trace receiver: POST /v1/traces,
// protobuf, as a collector takes it.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	service string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/traces of application/x-protobuf", http.StatusBadRequest)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	var req collector.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				o.service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&collector.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// callSpan is the received execute_tool span of tool in trace, if any.
func (o *otlpReceiver) callSpan(trace, tool string) *tracepb.Span {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.spans {
		if hex.EncodeToString(s.TraceId) == trace && s.Name == "execute_tool "+tool {
			return s
		}
	}
	return nil
}

// TestServeExportsTraces runs `toolwire serve` with OTEL_TRACES_EXPORTER=otlp
// pointed at a real OTLP/HTTP receiver: a turn submitted under a
// producer's trace context comes back as spans of that trace.
func TestServeExportsTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	recv := &otlpReceiver{}
	ts := httptest.NewServer(recv)
	defer ts.Close()
	bin := buildBinary(t)
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	cmd := exec.Command(bin, "serve", "--listen", addr, "--http", "127.0.0.1:"+strconv.Itoa(freePort(t)), "--api", "",
		"--store", filepath.Join(t.TempDir(), "data"), "--test-tools", "--workdir", t.TempDir())
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT="+ts.URL,
		"OTEL_SERVICE_NAME=toolwire-test", "OTEL_BSP_SCHEDULE_DELAY=100")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var nc *nats.Conn
	for {
		var err error
		if nc, err = nats.Connect("nats://" + addr); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("serve did not listen on %s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer nc.Close()
	waitStreams(ctx, t, nc)
	cl, err := client.New(nc, client.Config{Space: subjects.Default()})
	if err != nil {
		t.Fatal(err)
	}
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	pctx := tracing.Extract(ctx, "00-"+traceID+"-00f067aa0ba902b7-01", "")
	if err := cl.SubmitCalls(pctx, "otlp_turn", []client.Call{{ID: "n1", Name: "Noop", Input: json.RawMessage(`{}`)}}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	for d, err := range cl.Results(ctx, "otlp_turn") {
		if err != nil {
			t.Fatal(err)
		}
		if d.Done != nil {
			break
		}
	}
	// The batch goes out every 100 ms; the rest at exit.
	deadline := time.Now().Add(20 * time.Second)
	var span *tracepb.Span
	for span == nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		span = recv.callSpan(traceID, "Noop")
	}
	if span == nil {
		t.Fatalf("no execute_tool Noop span of trace %s reached the receiver", traceID)
	}
	attrs := map[string]string{}
	for _, kv := range span.Attributes {
		attrs[kv.Key] = kv.GetValue().GetStringValue()
	}
	if attrs["gen_ai.operation.name"] != "execute_tool" || attrs["gen_ai.tool.name"] != "Noop" || attrs["gen_ai.tool.call.id"] != "n1" || attrs["toolwire.turn"] != "otlp_turn" {
		t.Errorf("execute_tool span attributes %v", attrs)
	}
	recv.mu.Lock()
	service := recv.service
	recv.mu.Unlock()
	if service != "toolwire-test" {
		t.Errorf("service.name = %q, want OTEL_SERVICE_NAME's toolwire-test", service)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve exited: %v", err)
	}
}

func TestTracesExporterFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		exporter, endpoint, disabled, protocol string
		want                                   string
		bad                                    bool
	}{
		{want: "none"},
		{endpoint: "http://127.0.0.1:4318", want: "otlp"},
		{exporter: "otlp", want: "otlp"},
		{exporter: "console", want: "console"},
		{exporter: "none", endpoint: "http://127.0.0.1:4318", want: "none"},
		{exporter: "otlp", disabled: "true", want: "none"},
		{exporter: "zipkin", bad: true},
		{exporter: "otlp", protocol: "grpc", want: "otlp", bad: true},
	} {
		t.Setenv(envTracesExporter, tc.exporter)
		t.Setenv(envOTLPEndpoint, tc.endpoint)
		t.Setenv(envTracesEndpoint, "")
		t.Setenv(envSDKDisabled, tc.disabled)
		t.Setenv(envOTLPProtocol, tc.protocol)
		t.Setenv(envTracesProtocol, "")
		tp, stop, err := startTracing(context.Background(), slog.New(slog.DiscardHandler))
		if (err != nil) != tc.bad {
			t.Errorf("%+v: err %v", tc, err)
			continue
		}
		if err != nil {
			continue
		}
		if (tp != nil) != (tc.want != "none") {
			t.Errorf("%+v: provider %v, want %s", tc, tp, tc.want)
		}
		stop()
	}
}

// TestMalformedResourceAttributes: an OTEL_RESOURCE_ATTRIBUTES entry
// without a value is a warning, not a reason to refuse to start.
func TestMalformedResourceAttributes(t *testing.T) {
	t.Setenv(envTracesExporter, "console")
	t.Setenv(envSDKDisabled, "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test,novalue")
	var logs strings.Builder
	tp, stop, err := startTracing(context.Background(), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil || tp == nil {
		t.Fatalf("startTracing: %v, %v", tp, err)
	}
	stop()
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "novalue") {
		t.Errorf("no warning naming the entry left out:\n%s", logs.String())
	}
}
