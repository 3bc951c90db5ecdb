package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolwire/toolwire/subjects"
)

// minTokenLen keeps guessable tokens out: a token is a shared secret, and
// 16 random characters are the least that holds against guessing over HTTP.
const minTokenLen = 16

// API is the HTTP API's part of the file:
//
//	{"tenants": {"acme": {"token_file": "/run/secrets/acme"}, "globex": {"token": "…"}}}
type API struct {
	// Tenants are the API tokens, by tenant; a request's bearer token
	// picks its tenant.
	Tenants map[string]APITenant `json:"tenants"`
}

// APITenant is one tenant's token: inline, or in a file (a mounted secret).
type APITenant struct {
	Token     string `json:"token"`
	TokenFile string `json:"token_file"`
}

// setAPI reads the api field; token files are read by Load, which knows
// where the file is.
func (c *Config) setAPI(raw json.RawMessage, at int64) error {
	if string(raw) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var a API
	if err := dec.Decode(&a); err != nil {
		return errAt(at, "field \"api\": want {\"tenants\": {name: {\"token\": …} or {\"token_file\": …}}}: %v", err)
	}
	for _, name := range slices.Sorted(maps.Keys(a.Tenants)) {
		t := a.Tenants[name]
		where := at + memberAt(raw, "tenants")
		if err := subjects.CheckToken("tenant", name); err != nil {
			return errAt(where, "field \"api\".tenants[%q]: %v", name, err)
		}
		if (t.Token == "") == (t.TokenFile == "") {
			return errAt(where, "field \"api\".tenants[%q]: give exactly one of token and token_file", name)
		}
		if t.Token != "" {
			if err := checkToken(t.Token); err != nil {
				return errAt(where, "field \"api\".tenants[%q].token: %v", name, err)
			}
		}
	}
	c.API = &a
	return nil
}

// checkToken refuses a token too short to be a secret or one that cannot
// travel in an Authorization header.
func checkToken(tok string) error {
	if len(tok) < minTokenLen {
		return fmt.Errorf("%d characters; want at least %d (random)", len(tok), minTokenLen)
	}
	if i := strings.IndexFunc(tok, func(r rune) bool { return r <= ' ' || r > '~' }); i >= 0 {
		return fmt.Errorf("has a space, control or non-ASCII character at byte %d", i)
	}
	return nil
}

// readTokenFiles fills in the tokens kept in files, read relative to dir
// (the configuration file's directory).
func (c *Config) readTokenFiles(dir string) error {
	if c.API == nil {
		return nil
	}
	for name, t := range c.API.Tenants {
		if t.TokenFile == "" {
			continue
		}
		path := t.TokenFile
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("field \"api\".tenants[%q].token_file: %w", name, err)
		}
		t.Token = strings.TrimSpace(string(b))
		if err := checkToken(t.Token); err != nil {
			return fmt.Errorf("field \"api\".tenants[%q].token_file %s: the token %v", name, path, err)
		}
		c.API.Tenants[name] = t
	}
	return nil
}

// APITokens maps each API token to its tenant; empty when c is nil or
// names none. Two tenants with one token are refused: the token would not
// say whose a request is.
func (c *Config) APITokens() (map[string]string, error) {
	tokens := map[string]string{}
	if c == nil || c.API == nil {
		return tokens, nil
	}
	for _, name := range slices.Sorted(maps.Keys(c.API.Tenants)) {
		tok := c.API.Tenants[name].Token
		if other, dup := tokens[tok]; dup {
			return nil, fmt.Errorf("config: api tenants %q and %q have the same token", other, name)
		}
		tokens[tok] = name
	}
	return tokens, nil
}
