package config

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

// setBash reads the Bash tool's sandbox policy:
//
//	{"env": ["GOPATH"], "limits": {"cpu_seconds": 600, "memory_bytes": 4294967296,
//	 "open_files": 4096, "processes": 0}, "writable": ["/home/agent/.cache"],
//	 "network": false, "strict": false, "sandbox": "auto", "bwrap": "/usr/bin/bwrap"}
func (c *Config) setBash(raw json.RawMessage, at int64) error {
	if string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var p sandbox.Policy
	if err := dec.Decode(&p); err != nil {
		return errAt(at, "field \"bash\": want {\"env\": [names], \"limits\": {\"cpu_seconds\", \"memory_bytes\", \"open_files\", \"processes\"}, \"writable\": [paths], \"network\": bool, \"strict\": bool, \"sandbox\": \"auto\"|\"landlock\"|\"bwrap\"|\"none\", \"bwrap\": path}: %v", err)
	}
	for i, name := range p.Env {
		if name == "" || strings.ContainsAny(name, "= \t\n") {
			return errAt(at+memberAt(raw, "env"), "field \"bash\".env[%d]: %q is not a variable name", i, name)
		}
	}
	for i, path := range p.Writable {
		if !filepath.IsAbs(path) {
			return errAt(at+memberAt(raw, "writable"), "field \"bash\".writable[%d]: %q is not an absolute path", i, path)
		}
	}
	if !p.Sandbox.Valid() {
		return errAt(at+memberAt(raw, "sandbox"), "field \"bash\".sandbox: %q is not a backend: want \"auto\", \"landlock\", \"bwrap\" or \"none\"", p.Sandbox)
	}
	if p.Strict && p.Sandbox == sandbox.BackendNone {
		return errAt(at+memberAt(raw, "strict"), "field \"bash\".strict: true with sandbox \"none\" would refuse every command")
	}
	if p.Bwrap != "" && !filepath.IsAbs(p.Bwrap) {
		return errAt(at+memberAt(raw, "bwrap"), "field \"bash\".bwrap: %q is not an absolute path", p.Bwrap)
	}
	c.Bash = &p
	return nil
}

// BashPolicy is the file's Bash policy, else the default; c may be nil.
func (c *Config) BashPolicy() sandbox.Policy {
	if c == nil || c.Bash == nil {
		return sandbox.Policy{}
	}
	return *c.Bash
}
