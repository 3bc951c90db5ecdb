package loadtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/toolwire/toolwire/schemas"
)

// logSchema compiles the event log line's schema, with formats asserted.
func logSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemas.EventLogSchema()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	const id = "https://toolwire.dev/schemas/event_log_line.v1.json"
	if doc.(map[string]any)["$id"] != id {
		t.Errorf("$id = %v", doc.(map[string]any)["$id"])
	}
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(id)
	if err != nil {
		t.Fatalf("event_log_line.v1.json does not compile: %v", err)
	}
	for i, ex := range doc.(map[string]any)["examples"].([]any) {
		if err := sch.Validate(ex); err != nil {
			t.Errorf("example %d: %v", i, err)
		}
	}
	return sch
}

// validateLog checks every line of an event log against the schema.
func validateLog(t *testing.T, sch *jsonschema.Schema, b []byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(sc.Bytes()))
		if err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("line %d does not validate: %v\n%s", n, err, sc.Bytes())
		}
	}
}

func sampleLog() []LogEvent {
	meta := func(seq int) schemas.Meta {
		return schemas.Meta{ID: "id" + string(rune('a'+seq+1)), Source: "/test", Tenant: "default", Turn: "turn_1", Seq: seq,
			Time: time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)}
	}
	return []LogEvent{
		{Offset: 0, Meta: meta(0), Data: &schemas.ToolUse{Seq: 0, ToolUseID: "toolu_a", Name: "Noop", Input: schemas.RawJSON(`{"n":1}`), Complete: true}},
		{Offset: 1500 * time.Microsecond, Meta: meta(1), Data: &schemas.ToolUse{Seq: 1, ToolUseID: "toolu_b", Name: "Sleep", Input: schemas.RawJSON(`{"ms":1,"safe":false}`), Complete: true, MaxConcurrency: 4}},
		{Offset: 3 * time.Millisecond, Meta: meta(-1), Data: &schemas.TurnCancel{Reason: "user"}},
		{Offset: 4 * time.Millisecond, Meta: meta(-1), Data: &schemas.TurnEnd{Calls: 2, StopReason: "tool_use"}},
		{Offset: 5 * time.Millisecond, Meta: meta(-1), Data: &schemas.TurnDiscard{Reason: "retry"}},
	}
}

func TestEventLogRoundTrip(t *testing.T) {
	sch := logSchema(t)
	var buf bytes.Buffer
	lw := NewLogWriter(&buf)
	in := sampleLog()
	for _, e := range in {
		if err := lw.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Flush(); err != nil {
		t.Fatal(err)
	}
	if lw.Lines() != len(in) || strings.Count(buf.String(), "\n") != len(in) {
		t.Fatalf("%d lines written:\n%s", lw.Lines(), buf.String())
	}
	validateLog(t, sch, buf.Bytes())
	out, err := ReadLog(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("read %d events, wrote %d", len(out), len(in))
	}
	for i := range in {
		if out[i].Offset != in[i].Offset {
			t.Errorf("event %d: offset %s, want %s", i, out[i].Offset, in[i].Offset)
		}
		a, _ := json.Marshal(in[i].Data)
		b, _ := json.Marshal(out[i].Data)
		if string(a) != string(b) || out[i].Data.EventType() != in[i].Data.EventType() {
			t.Errorf("event %d: data %s, want %s", i, b, a)
		}
		if m := out[i].Meta; m.ID != in[i].Meta.ID || m.Source != "/test" || m.Tenant != "default" || m.Turn != "turn_1" || m.Seq != in[i].Meta.Seq || !m.Time.Equal(in[i].Meta.Time) {
			t.Errorf("event %d: meta %+v, want %+v", i, m, in[i].Meta)
		}
	}
}

func TestEventLogBadLines(t *testing.T) {
	var buf bytes.Buffer
	lw := NewLogWriter(&buf)
	if err := lw.Write(sampleLog()[0]); err != nil {
		t.Fatal(err)
	}
	_ = lw.Flush()
	good := strings.TrimSpace(buf.String())
	for _, c := range []struct{ line, field string }{
		{`not json`, ""},
		{`{"event":{}}`, "offset_ms"},
		{`{"offset_ms":-1,"event":{}}`, "offset_ms"},
		{`{"offset_ms":"1","event":{}}`, "offset_ms"},
		{`{"offset_ms":1}`, "event"},
		{`{"offset_ms":1,"event":{},"extra":1}`, ""},
		{strings.Replace(good, `"dev.toolwire.tool_use.v1"`, `"dev.toolwire.tool_result.v1"`, 1), "event.type"},
		{strings.Replace(good, `"application/json"`, `"application/msgpack"`, 1), "event.datacontenttype"},
		{strings.Replace(good, `"turn":"turn_1",`, ``, 1), "event.turn"},
		{strings.Replace(good, `"specversion":"1.0"`, `"specversion":"0.3"`, 1), "event.specversion"},
		{strings.Replace(good, `"name":"Noop"`, `"name":7`, 1), "event.data"},
		{strings.Replace(good, `"seq":0,"data"`, `"seq":3,"data"`, 1), "event.seq"},
	} {
		log := good + "\n\n" + good + "\n" + c.line + "\n" + good + "\n"
		evs, err := ReadLog(strings.NewReader(log))
		var le *LogError
		if !errors.As(err, &le) {
			t.Errorf("%s: got %v, want a *LogError", c.line, err)
			continue
		}
		if le.Line != 4 || le.Field != c.field && !strings.HasPrefix(le.Field, c.field) || len(evs) != 2 {
			t.Errorf("%s: %v (line %d, field %q, %d events before), want line 4, field %q", c.line, err, le.Line, le.Field, len(evs), c.field)
		}
		if !strings.Contains(err.Error(), "line 4") {
			t.Errorf("%s: %v does not name the line", c.line, err)
		}
	}
}
