package schemas

// EventLogSchema returns the JSON Schema (draft 2020-12) of one line of an
// event log, as `toolwire loadtest record` writes it (docs/loadtest.md).
func EventLogSchema() []byte {
	b, err := schemaFiles.ReadFile("jsonschema/event_log_line.v1.json")
	if err != nil {
		panic("schemas: event_log_line.v1.json not embedded")
	}
	return b
}
