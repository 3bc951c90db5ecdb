package config

import (
	"slices"
	"strings"

	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool/builtin/sandbox"
	"github.com/toolwire/toolwire/tool/mcp"
)

// Redacted stands in for a secret in what Effective shows.
const Redacted = "<redacted>"

// Overrides are what the environment or the flags set over the file; the
// binary reads them (the configuration never reads the environment).
type Overrides struct {
	// ToolSearch and its source ("env TOOLWIRE_TOOL_SEARCH"), when set.
	ToolSearch, ToolSearchFrom string
	// Values are scalar settings as the process has them, each with its
	// source ("flag --listen", "env TOOLWIRE_SERVE_LISTEN", "file",
	// "default"), by key; a setting missing here is the file's, else its
	// default.
	Values map[string]Sourced[string]
}

// Effective is the configuration a process runs with — the file's fields,
// the overrides and every default filled in — with its secrets redacted:
// what `toolwire config print` shows.
type Effective struct {
	File           string             `json:"file"`
	Deny           []string           `json:"deny"`
	ToolSearch     Sourced[string]    `json:"tool_search"`
	MaxConcurrency Sourced[int]       `json:"max_tool_use_concurrency"`
	Permissions    *Permissions       `json:"permissions,omitempty"`
	MCPServers     []mcp.ServerConfig `json:"mcp_servers"`
	Limits         schemas.Limits     `json:"limits"`
	APITenants     map[string]string  `json:"api_tenants"`
	Bash           sandbox.Policy     `json:"bash"`
	// The sections of process settings, by key within the section.
	NATS    map[string]Sourced[any] `json:"nats"`
	Log     map[string]Sourced[any] `json:"log"`
	Serve   map[string]Sourced[any] `json:"serve"`
	Cluster map[string]Sourced[any] `json:"cluster"`
	Proxy   map[string]Sourced[any] `json:"proxy"`
}

// Sourced is a value and where it came from: "file", "default", or the
// variable or flag that set it.
type Sourced[T any] struct {
	Value T      `json:"value"`
	From  string `json:"from"`
}

// Effective is c (nil: no file, read from path) with o laid over it and
// the defaults filled in; defaultConcurrency is the pipeline's own default.
func (c *Config) Effective(path string, o Overrides, defaultConcurrency int) Effective {
	e := Effective{File: path, Deny: []string{}, MCPServers: []mcp.ServerConfig{}, APITenants: map[string]string{},
		ToolSearch:     Sourced[string]{c.ToolSearchMode().String(), "default"},
		MaxConcurrency: Sourced[int]{defaultConcurrency, "default"},
		Limits:         schemas.DefaultLimits(),
		Bash:           c.BashPolicy(),
	}
	if c != nil {
		e.Deny = append(e.Deny, c.Deny...)
		if c.ToolSearch != "" {
			e.ToolSearch.From = "file"
		}
		e.Permissions = c.Permissions
		e.Limits = c.Limits.WithDefaults()
		for _, s := range c.MCPServers {
			e.MCPServers = append(e.MCPServers, redactServer(s))
		}
		if c.API != nil {
			for name, t := range c.API.Tenants {
				e.APITenants[name] = Redacted
				if t.TokenFile != "" {
					e.APITenants[name] = "token_file " + t.TokenFile
				}
			}
		}
	}
	if o.ToolSearch != "" {
		e.ToolSearch = Sourced[string]{o.ToolSearch, o.ToolSearchFrom}
	}
	if v, from := c.value("max_tool_use_concurrency", o); from != "default" && v.(int) > 0 {
		e.MaxConcurrency = Sourced[int]{v.(int), from}
	}
	sections := map[string]*map[string]Sourced[any]{"nats": &e.NATS, "log": &e.Log, "serve": &e.Serve, "cluster": &e.Cluster, "proxy": &e.Proxy}
	for _, s := range settings {
		top, name, ok := strings.Cut(s.Key, ".")
		if !ok {
			continue
		}
		m := sections[top]
		if *m == nil {
			*m = map[string]Sourced[any]{}
		}
		v, from := c.value(s.Key, o)
		switch {
		case s.Secret && v != "":
			v = Redacted
		case s.URLs:
			v = redactURLs(v.(string))
		}
		(*m)[name] = Sourced[any]{v, from}
	}
	if e.Bash.Limits == nil {
		l := sandbox.DefaultLimits()
		e.Bash.Limits = &l
	}
	if e.Bash.Sandbox == "" {
		e.Bash.Sandbox = sandbox.BackendAuto
	}
	return e
}

// redactServer hides an MCP server's environment values and headers,
// which commonly hold its credentials, and keeps their names; its URL
// loses its credentials (redactURL). Its command's arguments are shown as
// written: what is a secret there is the server's own convention, which
// is why credentials belong in its environment.
func redactServer(s mcp.ServerConfig) mcp.ServerConfig {
	s.URL = redactURL(s.URL)
	s.Args = slices.Clone(s.Args)
	env := make([]string, len(s.Env))
	for i, kv := range s.Env {
		name, _, _ := strings.Cut(kv, "=")
		env[i] = name + "=" + Redacted
	}
	s.Env = env
	if s.Headers != nil {
		h := make(map[string]string, len(s.Headers))
		for k := range s.Headers {
			h[k] = Redacted
		}
		s.Headers = h
	}
	return s
}

// value is the scalar setting key as the process has it, typed by its
// kind (a duration as text), and where it came from: o's, else the
// file's, else the default.
func (c *Config) value(key string, o Overrides) (any, string) {
	s, _ := Lookup(key)
	text, from := s.Default, "default"
	if v, ok := o.Values[key]; ok {
		text, from = v.Value, v.From
	} else if v, ok := c.FileValue(key); ok {
		text, from = v, "file"
	}
	v, err := s.fromText(text)
	if err != nil || s.Kind == KindDuration {
		return text, from
	}
	return v, from
}
