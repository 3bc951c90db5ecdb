package config

import (
	"bytes"
	"encoding/json"
)

// setLimits reads the limits object: each field a positive integer, unknown
// fields refused so that a misspelt limit is not silently the default.
func (c *Config) setLimits(raw json.RawMessage, at int64) error {
	if string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c.Limits); err != nil {
		return errAt(at, "field \"limits\": want {\"max_calls_per_turn\": N, \"max_input_bytes\": N, \"max_content_bytes\": N, \"max_id_bytes\": N, \"max_name_bytes\": N, \"max_text_bytes\": N}: %v", err)
	}
	l := c.Limits
	for _, f := range []struct {
		name string
		v    int
	}{
		{"max_calls_per_turn", l.MaxCallsPerTurn}, {"max_input_bytes", l.MaxInputBytes},
		{"max_content_bytes", l.MaxContentBytes}, {"max_id_bytes", l.MaxIDBytes},
		{"max_name_bytes", l.MaxNameBytes}, {"max_text_bytes", l.MaxTextBytes},
	} {
		if f.v < 0 {
			return errAt(at, "field \"limits\".%s: want a positive integer, found %d", f.name, f.v)
		}
	}
	return nil
}
