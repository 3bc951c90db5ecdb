package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestConfigPrintAndCheck: print shows the effective configuration with
// each setting's source and no secret; check names a bad field's place.
func TestConfigPrintAndCheck(t *testing.T) {
	t.Setenv(envMaxConcurrency, "4")
	path := writeTemp(t, "toolwire.json", `{"deny": ["Write"], "tool_search": "off",
 "api": {"tenants": {"acme": {"token": "acme-0123456789abcdef-secret"}}},
 "mcp_servers": [{"name": "web", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer hdr-secret"}},
                 {"name": "local", "command": "srv", "env": ["API_KEY=env-secret"]}]}`)
	out, code, err := runSub(t, newConfig, "", "print", "--config", path)
	if code != 0 {
		t.Fatalf("print: %d %v", code, err)
	}
	for _, secret := range []string{"acme-0123456789abcdef-secret", "hdr-secret", "env-secret"} {
		if strings.Contains(out, secret) {
			t.Errorf("print shows a secret %q:\n%s", secret, out)
		}
	}
	var e struct {
		ToolSearch struct{ Value, From string } `json:"tool_search"`
		MaxConc    struct {
			Value int
			From  string
		} `json:"max_tool_use_concurrency"`
		Limits struct {
			MaxCallsPerTurn int `json:"max_calls_per_turn"`
		}
		Bash struct {
			Limits struct {
				MemoryBytes int64 `json:"memory_bytes"`
			}
		}
		MCP []struct{ Env []string } `json:"mcp_servers"`
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatal(err)
	}
	if e.ToolSearch.Value != "off" || e.ToolSearch.From != "file" || e.MaxConc.Value != 4 || !strings.Contains(e.MaxConc.From, envMaxConcurrency) ||
		e.Limits.MaxCallsPerTurn != 512 || e.Bash.Limits.MemoryBytes != 4<<30 || len(e.MCP) != 2 || e.MCP[1].Env[0] != "API_KEY=<redacted>" {
		t.Errorf("effective configuration:\n%s", out)
	}

	out, code, _ = runSub(t, newConfig, "", "check", path)
	if code != 0 || !strings.Contains(out, "ok") {
		t.Errorf("check of a good file: %d %q", code, out)
	}
	bad := writeTemp(t, "bad.json", "{\"deny\": [\n  5]}")
	_, code, err = runSub(t, newConfig, "", "check", bad)
	if code != 1 || err == nil || !strings.Contains(err.Error(), bad+":2:3: field \"deny\"[0]") {
		t.Errorf("check of a bad file: %d %v", code, err)
	}
	good := writeTemp(t, "toolwire.yml", "serve:\n  executors: 3\n")
	if out, code, _ := runSub(t, newConfig, "", "check", good); code != 0 || !strings.Contains(out, "ok") {
		t.Errorf("check of a good YAML file: %d %q", code, out)
	}
	badYAML := writeTemp(t, "bad.yaml", "serve:\n  executors: 0\n")
	_, code, err = runSub(t, newConfig, "", "check", badYAML)
	if code != 1 || err == nil || !strings.Contains(err.Error(), badYAML+`:2:14: field "serve".executors: want a positive integer, found 0`) {
		t.Errorf("check of a bad YAML file: %d %v", code, err)
	}
}
