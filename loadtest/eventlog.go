package loadtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/schemas"
)

// LogEvent is one line of an event log: an input event and when it was
// seen, counted from the log's first event. The line's JSON shape is
// schemas/jsonschema/event_log_line.v1.json.
type LogEvent struct {
	// Offset is from the log's first event.
	Offset time.Duration
	Meta   schemas.Meta
	Data   schemas.Data
}

// logLine is a line as JSON.
type logLine struct {
	OffsetMS *float64        `json:"offset_ms"`
	Event    json.RawMessage `json:"event"`
}

// logEnvelope is an event in CloudEvents' structured JSON mode.
type logEnvelope struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Time            string          `json:"time,omitempty"`
	DataContentType string          `json:"datacontenttype"`
	Tenant          string          `json:"tenant"`
	Turn            string          `json:"turn"`
	Seq             *int            `json:"seq,omitempty"`
	Data            json.RawMessage `json:"data"`
}

// inputTypes are the events an event log holds.
var inputTypes = map[string]bool{
	schemas.TypeToolUse: true, schemas.TypeTurnEnd: true, schemas.TypeTurnCancel: true, schemas.TypeTurnDiscard: true,
}

// LogWriter writes an event log, one line per event.
type LogWriter struct {
	w *bufio.Writer
	n int
}

// NewLogWriter writes an event log to w; Flush ends it.
func NewLogWriter(w io.Writer) *LogWriter { return &LogWriter{w: bufio.NewWriter(w)} }

// Write writes one event as a line.
func (lw *LogWriter) Write(e LogEvent) error {
	data, err := json.Marshal(e.Data)
	if err != nil {
		return fmt.Errorf("loadtest: event log: %w", err)
	}
	env := logEnvelope{
		SpecVersion: "1.0", ID: e.Meta.ID, Source: e.Meta.Source, Type: e.Data.EventType(),
		DataContentType: schemas.ContentJSON, Tenant: e.Meta.Tenant, Turn: e.Meta.Turn, Data: data,
	}
	if !e.Meta.Time.IsZero() {
		env.Time = e.Meta.Time.UTC().Format(time.RFC3339Nano)
	}
	if e.Meta.Seq >= 0 {
		seq := e.Meta.Seq
		env.Seq = &seq
	}
	b, err := json.Marshal(env)
	if err != nil {
		return fmt.Errorf("loadtest: event log: %w", err)
	}
	off := math.Round(float64(max(e.Offset, 0).Microseconds())) / 1000
	line, err := json.Marshal(logLine{OffsetMS: &off, Event: b})
	if err != nil {
		return fmt.Errorf("loadtest: event log: %w", err)
	}
	if _, err := lw.w.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("loadtest: event log: %w", err)
	}
	lw.n++
	return nil
}

// Lines is how many events were written.
func (lw *LogWriter) Lines() int { return lw.n }

// Flush writes what is buffered.
func (lw *LogWriter) Flush() error { return lw.w.Flush() }

// LogError is a bad line of an event log: its number (from 1) and the
// field at fault.
type LogError struct {
	Line  int
	Field string
	Err   error
}

func (e *LogError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("event log line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("event log line %d: %s: %v", e.Line, e.Field, e.Err)
}

func (e *LogError) Unwrap() error { return e.Err }

// ReadLog reads a whole event log. Blank lines are skipped; the first bad
// line is a *LogError.
func ReadLog(r io.Reader) ([]LogEvent, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var out []LogEvent
	for n := 1; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		e, err := parseLine(b)
		if err != nil {
			err.Line = n
			return out, err
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("loadtest: event log: %w", err)
	}
	return out, nil
}

func parseLine(b []byte) (LogEvent, *LogError) {
	bad := func(field string, format string, a ...any) (LogEvent, *LogError) {
		return LogEvent{}, &LogError{Field: field, Err: fmt.Errorf(format, a...)}
	}
	var l logLine
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&l); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return bad(te.Field, "want %s, got %s", te.Type, te.Value)
		}
		return bad("", "not a JSON object of offset_ms and event: %v", err)
	}
	if l.OffsetMS == nil {
		return bad("offset_ms", "required")
	}
	if *l.OffsetMS < 0 || math.IsNaN(*l.OffsetMS) {
		return bad("offset_ms", "must not be negative, got %g", *l.OffsetMS)
	}
	if len(l.Event) == 0 || string(l.Event) == "null" {
		return bad("event", "required")
	}
	var env logEnvelope
	if err := json.Unmarshal(l.Event, &env); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return bad("event."+te.Field, "want %s, got %s", te.Type, te.Value)
		}
		return bad("event", "not a JSON object: %v", err)
	}
	if !inputTypes[env.Type] {
		return bad("event.type", "%q is not an input event (tool_use, turn_end, turn_cancel, turn_discard)", env.Type)
	}
	if env.DataContentType != schemas.ContentJSON {
		return bad("event.datacontenttype", "want %q, got %q", schemas.ContentJSON, env.DataContentType)
	}
	for _, f := range []struct{ name, v string }{{"specversion", env.SpecVersion}, {"id", env.ID}, {"source", env.Source}, {"tenant", env.Tenant}, {"turn", env.Turn}} {
		if f.v == "" {
			return bad("event."+f.name, "required")
		}
	}
	if len(env.Data) == 0 {
		return bad("event.data", "required")
	}
	// The envelope back in binary mode, through the codec: the same checks
	// as an event on the wire.
	h := nats.Header{}
	h.Set("ce-specversion", env.SpecVersion)
	h.Set("ce-id", env.ID)
	h.Set("ce-source", env.Source)
	h.Set("ce-type", env.Type)
	h.Set("ce-time", env.Time)
	h.Set("ce-datacontenttype", env.DataContentType)
	h.Set("ce-tenant", env.Tenant)
	h.Set("ce-turn", env.Turn)
	if env.Seq != nil {
		h.Set("ce-seq", strconv.Itoa(*env.Seq))
	}
	for k, v := range h {
		if len(v) == 1 && v[0] == "" {
			delete(h, k)
		}
	}
	meta, data, err := schemas.Decode(h, env.Data)
	if err != nil {
		field := "event"
		var fe *schemas.FieldError
		if errors.As(err, &fe) {
			if f, ok := strings.CutPrefix(fe.Field, "ce-"); ok {
				field += "." + f
			} else {
				field += ".data." + strings.TrimPrefix(fe.Field, "data.")
				field = strings.TrimSuffix(field, ".data")
			}
		}
		return LogEvent{}, &LogError{Field: field, Err: err}
	}
	if u, ok := data.(*schemas.ToolUse); ok && meta.Seq != u.Seq {
		return bad("event.seq", "%d, but data.seq is %d", meta.Seq, u.Seq)
	}
	return LogEvent{Offset: time.Duration(*l.OffsetMS * float64(time.Millisecond)), Meta: meta, Data: data}, nil
}
