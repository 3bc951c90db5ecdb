// Package config reads toolwire's configuration file: a JSON object such as
//
//	{"deny": ["Bash(rm:*)", "Write"], "tool_search": "auto:10", "serve": {"http": "127.0.0.1:8090"}}
//
// or the same as YAML (a file named *.yaml or *.yml). Load checks every
// field and reports a bad one by its name and its place in the file
// (path:line:column). Config declares every setting, each with its
// default and its check; Settings lists them with their environment
// variables, which the binary reads (this package never reads the
// environment).
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin/sandbox"
	"github.com/toolwire/toolwire/tool/mcp"
	"github.com/toolwire/toolwire/tool/permission"
)

// Config is a loaded configuration file.
type Config struct {
	// Deny are rules that remove whole tools from the pool, as written
	// ("Bash(rm:*)", "Write").
	Deny []string `json:"deny"`
	// ToolSearch is the tool search mode as written: on, off, auto or
	// auto:N (defer tools past N% of the context window); "" when the
	// file does not set it.
	ToolSearch string `json:"tool_search" default:"auto:10"`

	// Permissions are the allow, deny and ask rules checked per call, a
	// default set plus each tenant's own (an ask waits for a decision).
	Permissions *Permissions `json:"permissions"`
	// MCPServers are the MCP servers whose tools join the pool, as
	// mcp__<server>__<tool>.
	MCPServers []mcp.ServerConfig `json:"mcp_servers"`
	// Limits bound every number and size an event may carry; unset
	// fields keep their defaults (docs/orchestration.md#limits).
	Limits schemas.Limits `json:"limits"`
	// API holds the HTTP API's bearer token of each tenant (none: no
	// authentication, and the API on loopback only).
	API *API `json:"api"`
	// Bash is the sandbox policy of the Bash tool: its environment,
	// resource limits, writable paths, network (none: the default).
	Bash *sandbox.Policy `json:"bash"`
	// MaxToolUseConcurrency is the per-turn concurrency limit the router
	// gives turns that set none (0: 10).
	MaxToolUseConcurrency int `json:"max_tool_use_concurrency" default:"0" check:"nonnegative"`

	// NATS is how commands connect to NATS and sign in.
	NATS NATS `json:"nats" config:"section"`
	// Log chooses the log lines of serve and proxy.
	Log Log `json:"log" config:"section"`
	// Serve are the settings of toolwire serve.
	Serve Serve `json:"serve" config:"section"`
	// Cluster makes serve's embedded server a member of a NATS cluster.
	Cluster Cluster `json:"cluster" config:"section"`
	// Proxy are the settings of toolwire proxy.
	Proxy Proxy `json:"proxy" config:"section"`

	// DenyRules are Deny parsed.
	DenyRules []tool.Rule `json:"-"`
	// Policy is Permissions parsed (nil without a permissions field).
	Policy *permission.Policy `json:"-"`
	// SearchMode is ToolSearch parsed (meaningful when ToolSearch != "").
	SearchMode tool.SearchMode `json:"-"`

	// fromFile are the scalar settings the file sets, by key, as a flag
	// takes them.
	fromFile map[string]string
}

// RuleSet is one set of per-call rules as written.
type RuleSet struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
	Ask   []string `json:"ask"`
}

// Permissions are the per-call rules of the file:
//
//	{"allow": ["Bash(git status:*)"], "deny": ["Bash(rm:*)"], "ask": ["Bash(git push:*)"],
//	 "tenants": {"acme": {"deny": ["Bash(curl:*)"]}}}
type Permissions struct {
	RuleSet
	Tenants map[string]RuleSet `json:"tenants"`
}

// Load reads and checks the file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	at := func(off int64) (int, int) { return position(data, off) }
	if IsYAML(path) {
		y, err := fromYAML(data)
		if err != nil {
			return nil, fmt.Errorf("config %s:%w", path, err)
		}
		data, at = y.json, y.at
	}
	c, err := Parse(data)
	if err != nil {
		var pe *PosError
		if errors.As(err, &pe) {
			line, col := at(pe.Offset)
			return nil, fmt.Errorf("config %s:%d:%d: %s", path, line, col, pe.Msg)
		}
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	if err := c.readTokenFiles(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// IsYAML reports whether the file at path is read as YAML: its name ends
// in .yaml or .yml; any other is JSON.
func IsYAML(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".yaml" || ext == ".yml"
}

// PosError is a problem at a byte offset of the file.
type PosError struct {
	Offset int64
	Msg    string
}

func (e *PosError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

func errAt(off int64, format string, args ...any) error {
	return &PosError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// Parse checks the text of a configuration file; errors are *PosError.
func Parse(data []byte) (*Config, error) {
	open := skipSpace(data, 0)
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errAt(open, "the file is empty: want a JSON object like {\"deny\": [\"Write\"], \"tool_search\": \"auto\"}")
	}
	// The whole text first, for syntax errors at their place in the file
	// (a streaming decoder's offsets are relative to its buffer).
	var probe any
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, syntaxError(err, int64(len(data)))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(err, open)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errAt(open, "want a JSON object, found %s", describe(tok))
	}
	c := &Config{}
	seen := map[string]bool{}
	for dec.More() {
		keyAt := skipSpace(data, dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(err, keyAt)
		}
		key, _ := tok.(string)
		if seen[key] {
			return nil, errAt(keyAt, "field %q appears twice", key)
		}
		seen[key] = true
		valueAt := skipSpace(data, dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntaxError(err, valueAt)
		}
		if err := c.set(key, raw, valueAt); errors.Is(err, errUnknown) {
			return nil, errAt(keyAt, "unknown field %q (known: %s)", key, strings.Join(fields, ", "))
		} else if err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, syntaxError(err, dec.InputOffset())
	}
	if rest := skipSpace(data, dec.InputOffset()); rest < int64(len(data)) {
		return nil, errAt(rest, "unexpected text after the JSON object")
	}
	return c, nil
}

// setDeny reads the deny list: an array of rule strings.
func (c *Config) setDeny(raw json.RawMessage, at int64) error {
	if string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return errAt(at, "field \"deny\": want an array of rules like [\"Bash(rm:*)\", \"Write\"], found %s", describeRaw(raw))
	}
	for i := 0; dec.More(); i++ {
		elemAt := at + skipSpace(raw, dec.InputOffset())
		var elem json.RawMessage
		if err := dec.Decode(&elem); err != nil {
			return syntaxError(err, elemAt)
		}
		var s string
		if err := json.Unmarshal(elem, &s); err != nil {
			return errAt(elemAt, "field \"deny\"[%d]: want a rule string, found %s", i, describeRaw(elem))
		}
		r, err := tool.ParseRule(s)
		if err != nil {
			return errAt(elemAt, "field \"deny\"[%d]: %v", i, err)
		}
		c.Deny = append(c.Deny, s)
		c.DenyRules = append(c.DenyRules, r)
	}
	return nil
}

// setPermissions reads and parses the per-call rules.
func (c *Config) setPermissions(raw json.RawMessage, at int64) error {
	if string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var p Permissions
	if err := dec.Decode(&p); err != nil {
		return errAt(at, "field \"permissions\": want {\"allow\": [rules], \"deny\": [rules], \"ask\": [rules], \"tenants\": {name: {…}}}: %v", err)
	}
	def, err := permission.ParseRules(p.Allow, p.Deny, p.Ask)
	if err != nil {
		return errAt(at, "field \"permissions\".%v", err)
	}
	policy := &permission.Policy{Default: def, Tenants: map[string]permission.Rules{}}
	for name, rs := range p.Tenants {
		r, err := permission.ParseRules(rs.Allow, rs.Deny, rs.Ask)
		if err != nil {
			return errAt(at, "field \"permissions\".tenants[%q].%v", name, err)
		}
		policy.Tenants[name] = r
	}
	c.Permissions, c.Policy = &p, policy
	return nil
}

// setMCPServers reads the MCP servers; Connect checks each one fully. A
// bad entry is reported at its own place in the file.
func (c *Config) setMCPServers(raw json.RawMessage, at int64) error {
	if string(raw) == "null" {
		return nil
	}
	const want = `{"name": …, "command": …, "args": […]} or {"name": …, "url": …}`
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return errAt(at, "field \"mcp_servers\": want an array of servers like [%s], found %s", want, describeRaw(raw))
	}
	var servers []mcp.ServerConfig
	first := map[string]int{} // name → index of the entry that has it
	for i := 0; dec.More(); i++ {
		elemAt := at + skipSpace(raw, dec.InputOffset())
		var elem json.RawMessage
		if err := dec.Decode(&elem); err != nil {
			return syntaxError(err, elemAt)
		}
		ed := json.NewDecoder(bytes.NewReader(elem))
		ed.DisallowUnknownFields()
		var s mcp.ServerConfig
		if err := ed.Decode(&s); err != nil {
			return errAt(elemAt, "field \"mcp_servers\"[%d]: want %s: %v", i, want, err)
		}
		j, dup := first[s.Name]
		switch {
		case s.Name == "":
			return errAt(elemAt, "field \"mcp_servers\"[%d]: no name", i)
		case dup:
			return errAt(elemAt+memberAt(elem, "name"), "field \"mcp_servers\"[%d].name: the name %q is used twice (first by [%d])", i, s.Name, j)
		case (s.Command == "") == (s.URL == ""):
			return errAt(elemAt, "field \"mcp_servers\"[%d] (%s): give exactly one of command and url", i, s.Name)
		}
		first[s.Name] = i
		servers = append(servers, s)
	}
	c.MCPServers = servers
	return nil
}

// memberAt is the offset in obj, a JSON object, of the value of its member
// key; 0 (the object itself) when it has none.
func memberAt(obj json.RawMessage, key string) int64 {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		return 0
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0
		}
		valueAt := skipSpace(obj, dec.InputOffset())
		if tok == key {
			return valueAt
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return 0
		}
	}
	return 0
}

// setToolSearch reads the tool search mode.
func (c *Config) setToolSearch(raw json.RawMessage, at int64) error {
	if string(raw) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return errAt(at, "field \"tool_search\": want a string (\"on\", \"off\", \"auto\" or \"auto:N\"), found %s", describeRaw(raw))
	}
	m, err := tool.ParseSearchMode(s)
	if err != nil {
		return errAt(at, "field \"tool_search\": %v", err)
	}
	c.ToolSearch, c.SearchMode = s, m
	return nil
}

// ToolSearchMode is the file's tool_search, else auto at the default
// threshold. c may be nil (no file). The binary's environment may override
// it (toolset.Options.SearchMode); the configuration never reads it.
func (c *Config) ToolSearchMode() tool.SearchMode {
	if c != nil && c.ToolSearch != "" {
		return c.SearchMode
	}
	return tool.SearchMode{Kind: tool.SearchAuto, Percent: tool.DefaultAutoPercent}
}

// Rules are the parsed deny rules; nil for a nil c.
func (c *Config) Rules() []tool.Rule {
	if c == nil {
		return nil
	}
	return slices.Clone(c.DenyRules)
}

// syntaxError places a decoding error: a *json.SyntaxError at its own
// offset, anything else at fallback.
func syntaxError(err error, fallback int64) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		if strings.Contains(se.Error(), "unexpected end") {
			return errAt(fallback, "not valid JSON: the text ends too early")
		}
		return errAt(max(se.Offset-1, 0), "not valid JSON: %v", se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errAt(fallback, "not valid JSON: the text ends too early")
	}
	return errAt(fallback, "not valid JSON: %v", err)
}

// skipSpace is the offset of the first byte at or after off that is not
// JSON white space or a separator between members.
func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return off
}

// position is the 1-based line and column (in characters) of offset.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return line, col
}

// describe names a JSON token's kind for an error.
func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return fmt.Sprintf("%q", string(v))
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

// describeRaw names a JSON value's kind for an error.
func describeRaw(raw json.RawMessage) string {
	switch t := bytes.TrimSpace(raw); {
	case len(t) == 0:
		return "nothing"
	case t[0] == '{':
		return "an object"
	case t[0] == '[':
		return "an array"
	case t[0] == '"':
		return "a string"
	case t[0] == 't' || t[0] == 'f':
		return "a boolean"
	case t[0] == 'n':
		return "null"
	}
	return "a number"
}
