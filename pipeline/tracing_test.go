package pipeline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/stage"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/internal/tracing"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/testtools"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// tracedPipeline runs the stages with a tracer whose spans rec records.
func tracedPipeline(t *testing.T) (*client.Client, *tracetest.SpanRecorder, trace.TracerProvider) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithIDGenerator(tracing.TurnIDs{}))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	srv := testenv.Server(t)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...), Hooks: stage.Hooks{TracerProvider: tp}})
	return testenv.Client(t, srv), rec, tp
}

// spansOf waits until the recorder holds, for each name, at least that
// many ended spans, and returns every ended span.
func spansOf(t *testing.T, rec *tracetest.SpanRecorder, want map[string]int) []sdktrace.ReadOnlySpan {
	t.Helper()
	var spans []sdktrace.ReadOnlySpan
	testenv.WaitFor(t, 10*time.Second, "the turn's spans", func() bool {
		spans = rec.Ended()
		got := map[string]int{}
		for _, s := range spans {
			got[s.Name()]++
		}
		for name, n := range want {
			if got[name] < n {
				return false
			}
		}
		return true
	})
	return spans
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// The acceptance test of tracing: a producer's span submits a turn
// through the client, and every stage's spans of the turn — router,
// executor and reorder hops and the calls' execute_tool spans — are one
// trace under the producer's span.
func TestTraceOfATurnContinuesTheProducers(t *testing.T) {
	cl, rec, tp := tracedPipeline(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	pctx, producer := tp.Tracer("agent").Start(ctx, "agent turn")
	calls := []client.Call{
		{ID: "call-ok", Name: "Noop", Input: json.RawMessage(`{"secret":"argument-value"}`)},
		{ID: "call-fails", Name: "Sleep", Input: json.RawMessage(`{"ms":1,"fail":true}`)},
	}
	if err := cl.SubmitCalls(pctx, "traced", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := testenv.ReadTurn(ctx, cl, "traced"); err != nil {
		t.Fatal(err)
	}
	producer.End()

	spans := spansOf(t, rec, map[string]int{
		"agent turn": 1, "router tool_use": 2, "executor dispatch": 2,
		"execute_tool Noop": 1, "execute_tool Sleep": 1, "reorder tool_result": 2,
	})
	root := producer.SpanContext()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		if s.SpanContext().TraceID() != root.TraceID() {
			t.Errorf("span %q is in trace %s, not the producer's %s", s.Name(), s.SpanContext().TraceID(), root.TraceID())
		}
		byID[s.SpanContext().SpanID()] = s
	}
	parentName := func(s sdktrace.ReadOnlySpan) string {
		if p, ok := byID[s.Parent().SpanID()]; ok {
			return p.Name()
		}
		return "(none)"
	}
	for _, s := range spans {
		// Every span of the turn descends from the producer's.
		at := s
		for hops := 0; at.SpanContext().SpanID() != root.SpanID(); hops++ {
			p, ok := byID[at.Parent().SpanID()]
			if !ok || hops > 10 {
				t.Errorf("span %q does not descend from the producer's span (stops at %q)", s.Name(), at.Name())
				break
			}
			at = p
		}
		want := map[string]string{
			"router tool_use":     "agent turn",
			"executor dispatch":   "router tool_use",
			"reorder tool_result": "execute_tool",
		}[s.Name()]
		if strings.HasPrefix(s.Name(), "execute_tool ") {
			want = "executor dispatch"
		}
		if got := parentName(s); want != "" && !strings.HasPrefix(got, want) {
			t.Errorf("span %q has parent %q, want %q", s.Name(), got, want)
		}
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), "argument-value") {
				t.Errorf("span %q carries an argument value in %s", s.Name(), kv.Key)
			}
		}
	}

	for _, s := range spans {
		if !strings.HasPrefix(s.Name(), "execute_tool ") {
			continue
		}
		a := attrs(s)
		tool := strings.TrimPrefix(s.Name(), "execute_tool ")
		id, seq, status := "call-ok", int64(0), codes.Unset
		if tool == "Sleep" {
			id, seq, status = "call-fails", 1, codes.Error
		}
		for k, want := range map[attribute.Key]attribute.Value{
			"gen_ai.operation.name": attribute.StringValue("execute_tool"),
			"gen_ai.tool.name":      attribute.StringValue(tool),
			"gen_ai.tool.call.id":   attribute.StringValue(id),
			"toolwire.tenant":       attribute.StringValue(subjects.DefaultTenant),
			"toolwire.turn":         attribute.StringValue("traced"),
			"toolwire.seq":          attribute.Int64Value(seq),
		} {
			if a[k] != want {
				t.Errorf("%s: %s = %v, want %v", s.Name(), k, a[k].Emit(), want.Emit())
			}
		}
		if s.Status().Code != status {
			t.Errorf("%s: status %v, want %v", s.Name(), s.Status().Code, status)
		}
		if s.SpanKind() != trace.SpanKindInternal {
			t.Errorf("%s: kind %v", s.Name(), s.SpanKind())
		}
	}
}

// A turn whose producer sends no trace context is still one trace: its
// id is derived from the turn, and the end's spans are in it too.
func TestTraceOfATurnWithoutProducerContext(t *testing.T) {
	cl, rec, _ := tracedPipeline(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range 2 {
		if err := cl.SubmitCall(ctx, "bare", i, client.Call{ID: "c", Name: "Noop", Input: json.RawMessage(`{}`)}, client.TurnOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.EndTurn(ctx, "bare", 2, "tool_use"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := testenv.ReadTurn(ctx, cl, "bare"); err != nil {
		t.Fatal(err)
	}
	spans := spansOf(t, rec, map[string]int{
		"router tool_use": 2, "router turn_end": 1, "executor dispatch": 2, "execute_tool Noop": 2, "reorder tool_result": 2,
	})
	want := tracing.TurnTraceID(subjects.DefaultTenant, "bare")
	for _, s := range spans {
		if s.SpanContext().TraceID() != want {
			t.Errorf("span %q is in trace %s, want the turn's %s", s.Name(), s.SpanContext().TraceID(), want)
		}
	}
}

// A malformed or over-long trace context on an event costs nothing: the
// call runs, and its spans go in the turn's own trace.
func TestMalformedTraceContextIgnored(t *testing.T) {
	srv := testenv.Server(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithIDGenerator(tracing.TurnIDs{}))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...), Hooks: stage.Hooks{TracerProvider: tp}})
	cl := testenv.Client(t, srv)
	js := testenv.JS(t, srv, "producer")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bad := []string{
		"00-zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-0000000000000000-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" + strings.Repeat("-ff", 200),
		"not a traceparent at all",
	}
	for i, tp := range bad {
		h, body := testenv.Encode(t, "badtrace", i, &schemas.ToolUse{Seq: i, ToolUseID: "c", Name: "Noop", Input: schemas.RawJSON(`{}`), Complete: true, Calls: len(bad)})
		h.Set("ce-traceparent", tp)
		h.Set("ce-tracestate", strings.Repeat("k=v,", 300))
		testenv.Publish(t, ctx, js, subjects.Default().In(subjects.DefaultTenant, "badtrace", subjects.KindUse), h, body,
			jetstream.WithMsgID(subjects.UseMsgID(subjects.DefaultTenant, "badtrace", i)))
	}
	results, _, err := testenv.ReadTurn(ctx, cl, "badtrace")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.IsError {
			t.Errorf("call %d failed: %s", r.Seq, r.Content)
		}
	}
	spans := spansOf(t, rec, map[string]int{"router tool_use": len(bad), "execute_tool Noop": len(bad)})
	want := tracing.TurnTraceID(subjects.DefaultTenant, "badtrace")
	for _, s := range spans {
		if s.SpanContext().TraceID() != want {
			t.Errorf("span %q is in trace %s, want the turn's %s", s.Name(), s.SpanContext().TraceID(), want)
		}
	}
}
