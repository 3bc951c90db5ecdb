package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/internal/config"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool"
)

func write(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolwire.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoad(t *testing.T) {
	path := write(t, `{"deny": ["Bash(rm:*)", "Write"], "tool_search": "auto:25"}`)
	c, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Deny, []string{"Bash(rm:*)", "Write"}) || c.ToolSearch != "auto:25" {
		t.Errorf("config %+v", c)
	}
	want := []tool.Rule{{Tool: "Bash", Content: "rm:*"}, {Tool: "Write"}}
	if !slices.Equal(c.Rules(), want) {
		t.Errorf("rules %v", c.Rules())
	}
	// The file's mode, whatever the environment says: the binary reads
	// the environment, the configuration does not.
	t.Setenv("TOOLWIRE_TOOL_SEARCH", "off")
	if m := c.ToolSearchMode(); m != (tool.SearchMode{Kind: tool.SearchAuto, Percent: 25}) {
		t.Errorf("mode from the file: %+v", m)
	}
}

func TestNilAndEmptyConfig(t *testing.T) {
	var c *config.Config
	if m := c.ToolSearchMode(); m.String() != "auto:10" || c.Rules() != nil {
		t.Errorf("no file: %+v", m)
	}
	c, err := config.Load(write(t, `{"deny": null, "tool_search": null}`))
	if err != nil || len(c.Rules()) != 0 || c.ToolSearch != "" {
		t.Errorf("nulls: %+v %v", c, err)
	}
	if c, err := config.Load(write(t, `{}`)); err != nil || c == nil {
		t.Errorf("{}: %v", err)
	}
}

// Each bad file is reported with the field and its line:column.
func TestLoadErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"{\n  \"deny\": [\"Write\",\n     \"Bash(rm\"]\n}", `:3:6: field "deny"[1]: rule "Bash(rm": missing ")" at the end`},
		{"{\n  \"deny\": \"Write\"\n}", `:2:11: field "deny": want an array of rules like ["Bash(rm:*)", "Write"], found a string`},
		{"{\n  \"deny\": [\"Write\", 5]\n}", `:2:21: field "deny"[1]: want a rule string, found a number`},
		{"{\n  \"tool_search\": \"maybe\"\n}", `:2:18: field "tool_search": invalid tool search mode "maybe": want on, off, auto or auto:N`},
		{"{\n  \"tool_search\": \"auto:0\"\n}", `:2:18: field "tool_search": invalid tool search mode "auto:0"`},
		{"{\n  \"tool_search\": 3\n}", `:2:18: field "tool_search": want a string`},
		{"{\n  \"deny\": [],\n  \"tols\": 1\n}", `:3:3: unknown field "tols" (known: deny, tool_search, permissions, mcp_servers, limits, api, bash, max_tool_use_concurrency, nats, log, serve, cluster, proxy)`},
		{"{\n  \"limits\": {\"max_calls\": 4}\n}", `:2:13: field "limits": want {"max_calls_per_turn": N`},
		{"{\n  \"limits\": {\"max_calls_per_turn\": -4}\n}", `:2:13: field "limits".max_calls_per_turn: want a positive integer, found -4`},
		{"{\n  \"limits\": [4]\n}", `:2:13: field "limits": want {"max_calls_per_turn": N`},
		{"{\n  \"deny\": [,]\n}", `:2:12: not valid JSON: invalid character ','`},
		{"{\"deny\":[]} x", `:1:13: not valid JSON: invalid character 'x' after top-level value`},
		{"", `:1:1: the file is empty`},
		{"  \n ", `:2:2: the file is empty`},
		{"[1]", `:1:1: want a JSON object, found an array`},
		{"{\n \"deny\": [\"Write\"],\n \"deny\": []\n}", `:3:2: field "deny" appears twice`},
		{"{\n \"deny\": [\"Write\"", `:2:18: not valid JSON: the text ends too early`},
		// A bad MCP server is reported at its entry, a second name at the name.
		{mcpServers(`{"name": "b", "url": "http://y"}`, `{"name": "a", "command": "z"}`), `:5:14: field "mcp_servers"[2].name: the name "a" is used twice (first by [0])`},
		{mcpServers(`{"name": "b", "url": "http://y"}`, `{"command": "z"}`), `:5:5: field "mcp_servers"[2]: no name`},
		{mcpServers(`{"name": "b"}`), `:4:5: field "mcp_servers"[1] (b): give exactly one of command and url`},
		{mcpServers(`{"name": "b", "comand": "z"}`), `:4:5: field "mcp_servers"[1]: want {"name": …, "command": …, "args": […]} or {"name": …, "url": …}: json: unknown field "comand"`},
		{"{\"mcp_servers\": {}}", `:1:17: field "mcp_servers": want an array of servers like [{"name": …`},
	} {
		path := write(t, c.body)
		_, err := config.Load(path)
		if err == nil || !strings.HasPrefix(err.Error(), "config "+path+":") || !strings.Contains(err.Error(), path+c.want) {
			t.Errorf("Load(%q) = %v\nwant ...%s%s", c.body, err, path, c.want)
		}
	}
	if _, err := config.Load(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
}

// mcpServers is a file whose mcp_servers are a server "a" and then entries,
// one a line from line 4 on, each indented by four spaces.
func mcpServers(entries ...string) string {
	return "{\n  \"mcp_servers\": [\n    {\"name\": \"a\", \"url\": \"http://x\"},\n    " + strings.Join(entries, ",\n    ") + "\n  ]\n}"
}

func TestPermissionsAndMCPServers(t *testing.T) {
	c, err := config.Parse([]byte(`{
  "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Bash(rm:*)"], "ask": ["Bash(git push:*)"],
                  "tenants": {"acme": {"deny": ["Write"]}}},
  "mcp_servers": [{"name": "docs", "command": "docs-server", "args": ["--stdio"]}, {"name": "web", "url": "http://127.0.0.1:9/mcp"}]
}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Policy == nil || len(c.Policy.Default.Deny) != 1 || len(c.Policy.Tenants["acme"].Deny) != 1 {
		t.Errorf("policy: %+v", c.Policy)
	}
	if len(c.MCPServers) != 2 || c.MCPServers[1].URL == "" {
		t.Errorf("servers: %+v", c.MCPServers)
	}
	for _, bad := range []struct{ text, want string }{
		{`{"permissions": {"deny": ["Bash(rm"]}}`, `deny[0]`},
		{`{"permissions": {"tenants": {"acme": {"ask": ["Bash(x"]}}}}`, `tenants["acme"].ask[0]`},
		{`{"permissions": {"alow": []}}`, `unknown field "alow"`},
		{`{"mcp_servers": [{"name": "a"}]}`, `exactly one of command and url`},
		{`{"mcp_servers": [{"name": "a", "url": "u"}, {"name": "a", "url": "v"}]}`, `used twice`},
	} {
		if _, err := config.Parse([]byte(bad.text)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Parse(%s) = %v, want an error containing %q", bad.text, err, bad.want)
		}
	}
}

// TestLimits: the limits a file sets replace the defaults field by field.
func TestLimits(t *testing.T) {
	c, err := config.Load(write(t, `{"limits": {"max_calls_per_turn": 64, "max_input_bytes": 4096}}`))
	if err != nil {
		t.Fatal(err)
	}
	l := c.Limits.WithDefaults()
	if l.MaxCallsPerTurn != 64 || l.MaxInputBytes != 4096 || l.MaxIDBytes != schemas.DefaultMaxIDBytes {
		t.Errorf("limits %+v", l)
	}
}
