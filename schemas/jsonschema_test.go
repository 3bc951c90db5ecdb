package schemas

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compiled returns the compiled schema of every event type, with formats
// asserted so that a bad date-time fails as it would in a strict validator.
func compiled(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	ids := map[string]string{}
	for _, typ := range EventTypes() {
		b, ok := JSONSchema(typ)
		if !ok {
			t.Fatalf("no schema for %s", typ)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		id := "https://toolwire.dev/schemas/" + shortType(typ) + ".json"
		if got := doc.(map[string]any)["$id"]; got != id {
			t.Errorf("%s: $id = %v, want %s", typ, got, id)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		ids[typ] = id
	}
	out := map[string]*jsonschema.Schema{}
	for typ, id := range ids {
		sch, err := c.Compile(id)
		if err != nil {
			t.Fatalf("%s does not compile: %v", typ, err)
		}
		out[typ] = sch
	}
	return out
}

func validate(t *testing.T, sch *jsonschema.Schema, doc string) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return sch.Validate(v)
}

func TestEventTypes(t *testing.T) {
	types := EventTypes()
	if !slices.IsSorted(types) {
		t.Errorf("EventTypes not sorted: %v", types)
	}
	if want := sortedSampleTypes(); !slices.Equal(types, want) {
		t.Errorf("EventTypes = %v, want %v", types, want)
	}
	types[0] = "mutated"
	if EventTypes()[0] == "mutated" {
		t.Error("EventTypes returns its internal slice")
	}
	for _, typ := range EventTypes() {
		if d, err := newData(typ); err != nil || d.EventType() != typ {
			t.Errorf("newData(%s) = %v, %v", typ, d, err)
		}
	}
	if _, ok := JSONSchema("dev.toolwire.nope.v1"); ok {
		t.Error("JSONSchema of an unknown type succeeded")
	}
	if _, ok := JSONSchema("../jsonschema/tool_use.v1"); ok {
		t.Error("JSONSchema of a path succeeded")
	}
	// No schema file without its type: a file nobody can reach is a contract
	// nobody implements.
	files, err := fs.Glob(schemaFiles, "jsonschema/*.json")
	if err != nil {
		t.Fatal(err)
	}
	// event_log_line.v1.json is the line of an event log, not an event.
	files = slices.DeleteFunc(files, func(f string) bool { return f == "jsonschema/event_log_line.v1.json" })
	if len(files) != len(EventTypes()) {
		t.Errorf("embedded schema files %v, want one per type of %v", files, EventTypes())
	}
}

// The schema and the Go type describe the same fields.
func TestSchemaPropertiesMatchGoFields(t *testing.T) {
	for _, typ := range EventTypes() {
		b, _ := JSONSchema(typ)
		var doc struct {
			Properties           map[string]json.RawMessage `json:"properties"`
			AdditionalProperties bool                       `json:"additionalProperties"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if !doc.AdditionalProperties {
			t.Errorf("%s: additionalProperties must be true", typ)
		}
		d, _ := newData(typ)
		var fields []string
		rt := reflect.TypeOf(d).Elem()
		for i := range rt.NumField() {
			f := rt.Field(i)
			jn, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			mn, _, _ := strings.Cut(f.Tag.Get("msgpack"), ",")
			if jn != mn {
				t.Errorf("%s.%s: json name %q, msgpack name %q", rt.Name(), f.Name, jn, mn)
			}
			fields = append(fields, jn)
		}
		slices.Sort(fields)
		if props := slices.Sorted(maps.Keys(doc.Properties)); !slices.Equal(props, fields) {
			t.Errorf("%s: schema properties %v, Go fields %v", typ, props, fields)
		}
	}
}

// What Go producers send validates, and every example a schema shows to
// producers in other languages both validates and decodes.
func TestSchemasAcceptGoOutputAndExamples(t *testing.T) {
	schemas := compiled(t)
	for typ, data := range samples() {
		h, body, err := Encode(Meta{Source: "s", Seq: callSeq(data), ContentType: ContentJSON}, data)
		if err != nil {
			t.Fatal(err)
		}
		if err := validate(t, schemas[typ], string(body)); err != nil {
			t.Errorf("%s: Go's JSON %s does not validate: %v", typ, body, err)
		}
		if _, _, err := Decode(h, body); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
		// Zero values too: that is what a Go producer sends for unset fields.
		zero, _ := json.Marshal(zeroLike(data))
		if err := validate(t, schemas[typ], string(zero)); err != nil {
			t.Errorf("%s: Go's JSON %s does not validate: %v", typ, zero, err)
		}

		b, _ := JSONSchema(typ)
		var doc struct {
			Examples []json.RawMessage `json:"examples"`
		}
		if err := json.Unmarshal(b, &doc); err != nil || len(doc.Examples) == 0 {
			t.Errorf("%s: no examples (%v)", typ, err)
		}
		for _, ex := range doc.Examples {
			if err := validate(t, schemas[typ], string(ex)); err != nil {
				t.Errorf("%s: example %s does not validate: %v", typ, ex, err)
			}
			if _, _, err := Decode(headers(typ, ContentJSON), ex); err != nil {
				t.Errorf("%s: example %s does not decode: %v", typ, ex, err)
			}
		}
	}
}

// zeroLike returns the smallest valid payload of d's type: required fields
// set, everything else zero.
func zeroLike(d Data) Data {
	switch d.(type) {
	case *ToolUse:
		return &ToolUse{ToolUseID: "t"}
	case *Dispatch:
		return &Dispatch{ToolUseID: "t", Tool: "x", Pool: "p", Input: RawJSON(`{}`)}
	case *ToolResult:
		return &ToolResult{ToolUseID: "t"}
	}
	z, _ := newData(d.EventType())
	reflect.ValueOf(z).Elem().SetZero()
	return z
}

// Dropping a field that Validate requires fails both the schema and Decode,
// and Decode names that field.
func TestSchemasRequireWhatValidateRequires(t *testing.T) {
	schemas := compiled(t)
	required := map[string][]string{
		TypeToolUse:          {"seq", "tool_use_id", "name", "input"}, // the sample is complete
		TypeTurnEnd:          {"calls"},
		TypeDispatch:         {"seq", "tool_use_id", "tool", "input", "pool"},
		TypeToolResult:       {"seq", "tool_use_id"},
		TypeToolProgress:     {"seq"},
		TypeTurnDone:         {"results"},
		TypeApprovalRequest:  {"seq", "tool_use_id", "tool", "input"},
		TypeApprovalDecision: {"seq"},
	}
	for typ, data := range samples() {
		full, _ := json.Marshal(data)
		var m map[string]any
		_ = json.Unmarshal(full, &m)
		for field := range m {
			delete(m, field)
			b, _ := json.Marshal(m)
			m[field] = json.RawMessage(mustJSON(t, full, field))

			schemaErr := validate(t, schemas[typ], string(b))
			_, _, decodeErr := Decode(headers(typ, ContentJSON), b)
			want := slices.Contains(required[typ], field)
			if (schemaErr != nil) != want {
				t.Errorf("%s without %s: schema error %v, want error %v", typ, field, schemaErr, want)
			}
			if (decodeErr != nil) != want {
				t.Errorf("%s without %s: Decode error %v, want error %v", typ, field, decodeErr, want)
			}
			if want {
				wantField(t, headers(typ, ContentJSON), b, field)
			}
		}
	}
}

func mustJSON(t *testing.T, obj []byte, field string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		t.Fatal(err)
	}
	return m[field]
}

// Where the schema and the decoder could drift apart, they must agree: a
// producer that validates against the schema is never rejected by toolwire.
func TestSchemaAgreesWithDecode(t *testing.T) {
	schemas := compiled(t)
	for _, tc := range []struct {
		typ, doc string
		valid    bool
	}{
		{TypeToolUse, `{"seq":0,"tool_use_id":"t"}`, true},
		{TypeToolUse, `{"seq":0,"tool_use_id":"t","complete":false,"raw_input":"{\"a\":"}`, true},
		{TypeToolUse, `{"seq":0,"tool_use_id":"t","complete":true,"name":"x","input":{}}`, true},
		{TypeToolUse, `{"seq":0,"tool_use_id":"t","complete":true,"name":"","input":{}}`, false},
		{TypeToolUse, `{"seq":0,"tool_use_id":"t","complete":true,"name":"x","input":null}`, false},
		{TypeToolUse, `{"seq":0,"tool_use_id":"t","complete":true,"name":"x"}`, false},
		{TypeToolUse, `{"seq":0,"tool_use_id":"","complete":false}`, false},
		{TypeToolUse, `{"seq":-1,"tool_use_id":"t"}`, false},
		{TypeToolUse, `{"seq":"0","tool_use_id":"t"}`, false},
		{TypeToolUse, `{"seq":0,"tool_use_id":"t","max_concurrency":-1}`, false},
		{TypeToolUse, `{"seq":0,"tool_use_id":"t","calls":2}`, true},
		{TypeToolUse, `{"seq":0,"tool_use_id":"t","calls":-1}`, false},
		{TypeToolResult, `{"seq":0,"tool_use_id":"t","turn_calls":-1}`, false},
		{TypeToolUse, `{"seq":0,"tool_use_id":"t","extra":{"deep":[1,2]}}`, true},
		{TypeDispatch, `{"seq":0,"tool_use_id":"t","tool":"x","pool":"p","input":{"n":9007199254740993}}`, true},
		{TypeDispatch, `{"seq":0,"tool_use_id":"t","tool":"","pool":"p","input":{}}`, false},
		{TypeDispatch, `{"seq":0,"tool_use_id":"t","tool":"x","pool":"","input":{}}`, false},
		{TypeToolResult, `{"seq":0,"tool_use_id":"t","started_at":"2025-05-01T12:00:00Z"}`, true},
		{TypeToolResult, `{"seq":0,"tool_use_id":"t","started_at":"2025-05-01T12:00:00.123456789012+05:30"}`, true},
		{TypeToolResult, `{"seq":0,"tool_use_id":"t","started_at":"0001-01-01T00:00:00Z"}`, true},
		{TypeToolResult, `{"seq":0,"tool_use_id":"t","started_at":"2025-05-01t12:00:00z"}`, false},
		{TypeToolResult, `{"seq":0,"tool_use_id":"t","started_at":"2016-12-31T23:59:60Z"}`, false},
		{TypeToolResult, `{"seq":0,"tool_use_id":"t","started_at":"2025-05-01 12:00:00Z"}`, false},
		{TypeToolResult, `{"seq":0,"tool_use_id":"t","started_at":"2025-13-01T12:00:00Z"}`, false},
		{TypeToolResult, `{"seq":0,"tool_use_id":"t","finished_at":"2025-05-01T12:00:00"}`, false},
		{TypeToolResult, `{"seq":0,"tool_use_id":"t","is_error":"yes"}`, false},
		{TypeTurnEnd, `{"calls":0}`, true},
		{TypeTurnEnd, `{"calls":-1}`, false},
		{TypeTurnEnd, `{"stop_reason":"end_turn"}`, false},
		{TypeTurnCancel, `{}`, true},
		{TypeTurnCancel, `null`, false},
		{TypeTurnCancel, `[]`, false},
		{TypeTurnDone, `{"results":"2"}`, false},
	} {
		schemaErr := validate(t, schemas[tc.typ], tc.doc)
		_, _, decodeErr := Decode(headers(tc.typ, ContentJSON), []byte(tc.doc))
		if (schemaErr == nil) != tc.valid || (decodeErr == nil) != tc.valid {
			t.Errorf("%s %s: schema error %v, Decode error %v; want valid=%v", shortType(tc.typ), tc.doc, schemaErr, decodeErr, tc.valid)
		}
	}
}
