package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/toolwire/toolwire/schemas"
)

// errUnknown is set's answer for a key the configuration does not have.
var errUnknown = errors.New("unknown field")

// set reads the top-level field key from raw, at offset at of the file.
func (c *Config) set(key string, raw json.RawMessage, at int64) error {
	switch key {
	case "deny":
		return c.setDeny(raw, at)
	case "tool_search":
		return c.setToolSearch(raw, at)
	case "permissions":
		return c.setPermissions(raw, at)
	case "mcp_servers":
		return c.setMCPServers(raw, at)
	case "limits":
		return c.setLimits(raw, at)
	case "api":
		return c.setAPI(raw, at)
	case "bash":
		return c.setBash(raw, at)
	}
	if section(key) >= 0 {
		return c.setSection(key, raw, at)
	}
	if s, ok := Lookup(key); ok {
		return c.setScalar(s, raw, at)
	}
	return errUnknown
}

// Override replaces the structured setting key (a list or an object, such
// as deny or permissions) with value, written as JSON, as the environment
// variable of the setting gives it; c may be nil (no file). Token files it
// names are read relative to the working directory. The error says why
// the value is refused, at which character of it.
func (c *Config) Override(key string, value []byte) (*Config, error) {
	s, ok := Lookup(key)
	if !ok || s.Kind != KindJSON {
		return c, fmt.Errorf("%s is not a structured setting", key)
	}
	if c == nil {
		c = &Config{}
	}
	next := *c
	switch key {
	case "deny":
		next.Deny, next.DenyRules = nil, nil
	case "limits":
		next.Limits = schemas.Limits{}
	}
	var probe any
	if err := json.Unmarshal(value, &probe); err != nil {
		return c, fmt.Errorf("not valid JSON: %v", err)
	}
	if err := next.set(key, value, 0); err != nil {
		var pe *PosError
		if errors.As(err, &pe) {
			line, col := position(value, pe.Offset)
			return c, fmt.Errorf("%d:%d: %s", line, col, pe.Msg)
		}
		return c, err
	}
	if key == "api" {
		if err := next.readTokenFiles(filepath.Clean(".")); err != nil {
			return c, err
		}
	}
	return &next, nil
}
