package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/config"
)

// TestAPITokens: tokens inline or in files (relative to the configuration
// file), each to its tenant; bad entries are refused with their place.
func TestAPITokens(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "globex.token"), []byte("globex-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "toolwire.json")
	body := `{"api": {"tenants": {"acme": {"token": "acme-0123456789abcdef"}, "globex": {"token_file": "globex.token"}}}}`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := c.APITokens()
	if err != nil || len(tokens) != 2 || tokens["acme-0123456789abcdef"] != "acme" || tokens["globex-0123456789abcdef"] != "globex" {
		t.Fatalf("tokens %v, %v", tokens, err)
	}
	var none *config.Config
	if tokens, err := none.APITokens(); err != nil || len(tokens) != 0 {
		t.Errorf("no file: %v %v", tokens, err)
	}

	for _, c := range []struct{ body, want string }{
		{`{"api": {"tenants": {"acme": {"token": "short"}}}}`, `field "api".tenants["acme"].token: 5 characters; want at least 16`},
		{`{"api": {"tenants": {"acme": {}}}}`, `give exactly one of token and token_file`},
		{`{"api": {"tenants": {"a.b": {"token": "acme-0123456789abcdef"}}}}`, `tenants["a.b"]`},
		{`{"api": {"tenant": {}}}`, `unknown field "tenant"`},
		{`{"api": {"tenants": {"acme": {"token_file": "nowhere"}}}}`, `token_file: open`},
		{`{"api": {"tenants": {"acme": {"token": "acme 0123456789abcdef"}}}}`, `space, control or non-ASCII character at byte 4`},
	} {
		_, err := config.Load(write(t, c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%s) = %v, want %q", c.body, err, c.want)
		}
	}
	dup := write(t, `{"api": {"tenants": {"a": {"token": "same-0123456789abcdef"}, "b": {"token": "same-0123456789abcdef"}}}}`)
	c2, err := config.Load(dup)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.APITokens(); err == nil || !strings.Contains(err.Error(), "the same token") {
		t.Errorf("shared token: %v", err)
	}
}
