package pipeline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool/testtools"
	"go.opentelemetry.io/otel/trace"
)

// TestTracingOffPassesTheProducersContextOn: with tracing off, the events
// of a turn carry the trace context its producer sent, unchanged, even
// when the pipeline was started under a span of the embedding program.
func TestTracingOffPassesTheProducersContextOn(t *testing.T) {
	span := func(traceID, spanID byte) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: trace.TraceID{traceID, 1}, SpanID: trace.SpanID{spanID, 1}, TraceFlags: trace.FlagsSampled})
	}
	embedder, producer := span(0xee, 0xee), span(0xaa, 0xaa)
	srv := testenv.Server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := pipeline.Start(trace.ContextWithSpanContext(ctx, embedder), srv.Connect,
		pipeline.Config{Space: subjects.Default(), Tools: testenv.Registry(t, testtools.Tools()...)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Stop(); err != nil {
			t.Errorf("pipeline stop: %v", err)
		}
	}()
	cl := testenv.Client(t, srv)
	calls := []client.Call{{ID: "a", Name: "Noop", Input: json.RawMessage(`{}`)}, {ID: "b", Name: "Nope", Input: json.RawMessage(`{}`)}}
	if err := cl.SubmitCalls(trace.ContextWithSpanContext(ctx, producer), "off", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := testenv.ReadTurn(ctx, cl, "off"); err != nil {
		t.Fatal(err)
	}
	js := testenv.JS(t, srv, "check")
	want := producer.TraceID().String()
	carried := 0
	for _, name := range []string{subjects.Default().ResultStream(), subjects.Default().OutStream()} {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
			m, err := s.GetMsg(ctx, seq)
			if err != nil {
				continue
			}
			tp := m.Header.Get("ce-traceparent")
			if tp == "" {
				continue
			}
			carried++
			if !strings.Contains(tp, want) {
				t.Errorf("%s %s (%s) carries %s, want the producer's trace %s", name, m.Subject, m.Header.Get("ce-type"), tp, want)
			}
		}
	}
	if carried == 0 {
		t.Error("no event of the turn carries a trace context")
	}
}
