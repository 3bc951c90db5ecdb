package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/internal/config"
)

func writeNamed(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestYAML: a YAML file holds what a JSON file does, process settings
// included, and the two give the same configuration.
func TestYAML(t *testing.T) {
	yml := `# toolwire
deny: [Write, "Bash(rm:*)"]
tool_search: auto:25
max_tool_use_concurrency: 4
permissions:
  ask: ["Bash(git push:*)"]
  tenants:
    acme: {deny: [Write]}
limits: {max_calls_per_turn: 64}
mcp_servers:
  - name: docs
    command: docs-mcp
    args: [--stdio]
    env: [API_KEY=x]
serve:
  listen: 127.0.0.1:5222
  http: ""
  executors: 3
  drain_timeout: 1m30s
  test_tools: true
nats:
  user: toolwire
  password: &pw s3cret-password
log: {level: debug, format: json}
cluster: {replicas: 3}
`
	c, err := config.Load(writeNamed(t, "toolwire.yaml", yml))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Deny, []string{"Write", "Bash(rm:*)"}) || c.ToolSearch != "auto:25" || c.MaxToolUseConcurrency != 4 ||
		c.Policy == nil || len(c.Policy.Tenants["acme"].Deny) != 1 || c.Limits.MaxCallsPerTurn != 64 || len(c.MCPServers) != 1 {
		t.Errorf("config %+v", c)
	}
	if c.Serve.Listen != "127.0.0.1:5222" || c.Serve.HTTP != "" || c.Serve.Executors != 3 || c.Serve.DrainTimeout != 90*time.Second ||
		!c.Serve.TestTools || c.NATS.User != "toolwire" || c.NATS.Password != "s3cret-password" || c.Log.Level != "debug" || c.Cluster.Replicas != 3 {
		t.Errorf("process settings %+v %+v %+v %+v", c.Serve, c.NATS, c.Log, c.Cluster)
	}
	for key, want := range map[string]string{"serve.http": "", "serve.drain_timeout": "1m30s", "serve.test_tools": "true", "serve.executors": "3", "max_tool_use_concurrency": "4"} {
		if v, ok := c.FileValue(key); !ok || v != want {
			t.Errorf("FileValue(%s) = %q, %v; want %q", key, v, ok, want)
		}
	}
	if _, ok := c.FileValue("serve.store"); ok {
		t.Error("serve.store is not in the file")
	}
	// The same as JSON.
	j, err := config.Load(writeNamed(t, "toolwire.json", `{"serve": {"listen": "127.0.0.1:5222", "drain_timeout": "1m30s"}, "nats": {"user": "toolwire"}}`))
	if err != nil || j.Serve.Listen != c.Serve.Listen || j.Serve.DrainTimeout != c.Serve.DrainTimeout || j.NATS.User != "toolwire" {
		t.Errorf("json: %+v %v", j, err)
	}
}

// TestFileErrors: every kind of bad file, YAML and JSON, is reported with
// the key's path, its line and column, and why.
func TestFileErrors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		// unknown keys
		{"a.yaml", "deny: []\ntols: 1\n", `:2:1: unknown field "tols" (known: deny, tool_search,`},
		{"a.yaml", "serve:\n  listen: 127.0.0.1:1\n  lisen: x\n", `:3:3: unknown field "serve".lisen (known in "serve": listen, store, http, api,`},
		{"a.json", "{\"serve\": {\n  \"lisen\": \"x\"}}", `:2:3: unknown field "serve".lisen`},
		// wrong types
		{"a.yaml", "serve:\n  executors: two\n", `:2:14: field "serve".executors: want an integer, found a string`},
		{"a.yaml", "serve:\n  executors: 2.5\n", `:2:14: field "serve".executors: want an integer, found 2.5`},
		{"a.json", "{\"serve\": {\"executors\": \"2\"}}", `:1:25: field "serve".executors: want an integer, found a string`},
		{"a.yml", "serve:\n  test_tools: yes\n", `:2:15: field "serve".test_tools: want true or false, found a string`},
		{"a.yaml", "serve:\n  drain_timeout: 20\n", `:2:18: field "serve".drain_timeout: want a duration like "20s"`},
		{"a.yaml", "serve: [1]\n", `:1:8: field "serve": want an object of settings like {"listen": …}, found an array`},
		{"a.yaml", "deny: Write\n", `:1:7: field "deny": want an array of rules`},
		{"a.yaml", "deny:\n  - Write\n  - 5\n", `:3:5: field "deny"[1]: want a rule string, found a number`},
		{"a.yaml", "tool_search: 3\n", `:1:14: field "tool_search": want a string`},
		{"a.yaml", "nats: {user: [a]}\n", `:1:14: field "nats".user: want a string, found an array`},
		// bad values
		{"a.yaml", "serve:\n  executors: 0\n", `:2:14: field "serve".executors: want a positive integer, found 0`},
		{"a.yaml", "serve:\n  drain_timeout: -1s\n", `:2:18: field "serve".drain_timeout: want a positive duration, found -1s`},
		{"a.yaml", "serve:\n  stages: router,exec\n", `:2:11: field "serve".stages: unknown stage "exec"`},
		{"a.yaml", "serve:\n  http: 8090\n", `:2:9: field "serve".http: want a string, found a number`},
		{"a.yaml", "serve:\n  http: localhost\n", `:2:9: field "serve".http: want host:port`},
		{"a.yaml", "log:\n  level: loud\n", `:2:10: field "log".level: want debug, info, warn or error, found "loud"`},
		{"a.yaml", "cluster:\n  replicas: 7\n", `:2:13: field "cluster".replicas: JetStream keeps 1 to 5 replicas`},
		{"a.yaml", "proxy:\n  upstream: ftp://x\n", `:2:13: field "proxy".upstream: want an http:// or https:// URL`},
		{"a.yaml", "max_tool_use_concurrency: -1\n", `:1:27: field "max_tool_use_concurrency": want 0 or more, found -1`},
		{"a.yaml", "deny:\n  - \"Bash(rm\"\n", `:2:5: field "deny"[0]: rule "Bash(rm": missing ")"`},
		{"a.yaml", "limits:\n  max_calls_per_turn: -4\n", `:2:3: field "limits".max_calls_per_turn: want a positive integer, found -4`},
		{"a.yaml", "mcp_servers:\n  - {name: a, url: http://x}\n  - {name: a, command: z}\n", `:3:12: field "mcp_servers"[1].name: the name "a" is used twice`},
		// the file's own structure
		{"a.yaml", "serve:\n  listen: a\n  listen: b\n", `:3:3: key "listen" appears twice in this mapping (first on line 2)`},
		{"a.yaml", "serve:\n  listen: a\n  http: 'x\n", `:3:1: not valid YAML: found unexpected end of stream`},
		{"a.yaml", "serve:\n  listen: [a\n", `:1:1: not valid YAML: did not find expected ',' or ']'`},
		{"a.yaml", "deny: [Write]\n\tserve: {}\n", `:2:1: not valid YAML: found character that cannot start any token`},
		{"a.yaml", "- a\n- b\n", `:1:1: want a YAML mapping of settings`},
		{"a.yaml", "", `:1:1: the file is empty`},
		{"a.yaml", "# nothing\n", `:1:1: the file is empty`},
		{"a.yaml", "deny: []\n---\ndeny: []\n", `:2:1: a second YAML document`},
		{"a.yaml", "deny: []\n---\ndeny: [\n", `:3:1: not valid YAML: did not find expected`},
		{"a.yaml", "deny: []\n---\n\tdeny: []\n", `:3:1: not valid YAML: found character that cannot start any token`},
		{"a.yaml", "serve:\n  <<: {listen: x}\n", `:2:3: merge keys (<<) are not supported`},
		{"a.yaml", "serve:\n  http: .inf\n", `:2:9: .inf is not a finite number`},
		{"a.yaml", "a: &a [*a]\n", `:1:`},
		{"a.yaml", "serve:\n  executors: &x 1\n  reorders: *x\n  store: *x\n", `:4:10: field "serve".store: want a string, found a number`},
	} {
		path := writeNamed(t, c.name, c.body)
		_, err := config.Load(path)
		if err == nil || !strings.HasPrefix(err.Error(), "config "+path+":") || !strings.Contains(err.Error(), path+c.want) {
			t.Errorf("Load(%s %q) = %v\nwant ...%s%s", c.name, c.body, err, path, c.want)
		}
	}
}

// TestSettings: every setting has a variable made from its key, a kind,
// and a default its own check takes.
func TestSettings(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range config.Settings() {
		if want := "TOOLWIRE_" + strings.ToUpper(strings.ReplaceAll(s.Key, ".", "_")); s.Var != want || seen[s.Var] {
			t.Errorf("%s: variable %s, want %s once", s.Key, s.Var, want)
		}
		seen[s.Var] = true
		if s.Kind == config.KindJSON || s.Default == "" && s.Kind != config.KindString {
			continue
		}
		if _, err := s.ParseText(s.Default); err != nil {
			t.Errorf("%s: default %q refused: %v", s.Key, s.Default, err)
		}
	}
	for _, name := range []string{"TOOLWIRE_TOOL_SEARCH", "TOOLWIRE_MAX_TOOL_USE_CONCURRENCY", "TOOLWIRE_SERVE_DRAIN_TIMEOUT", "TOOLWIRE_NATS_PASSWORD"} {
		if !seen[name] {
			t.Errorf("no setting has the variable %s", name)
		}
	}
	s, _ := config.Lookup("serve.drain_timeout")
	if v, err := s.ParseText("90s"); err != nil || v != "1m30s" {
		t.Errorf("ParseText(90s) = %q, %v", v, err)
	}
	if _, err := s.ParseText("soon"); err == nil || !strings.Contains(err.Error(), `want a duration like "20s" or "1m30s", found "soon"`) {
		t.Errorf("ParseText(soon) = %v", err)
	}
	if p, _ := config.Lookup("nats.password"); !p.Secret {
		t.Error("nats.password is not secret")
	}
}

// TestOverride: a structured setting's variable replaces the file's.
func TestOverride(t *testing.T) {
	c, err := config.Load(writeNamed(t, "c.yaml", "deny: [Write]\nlimits: {max_calls_per_turn: 64}\n"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Override("deny", []byte(`["Read", "Edit"]`))
	if err != nil || !slices.Equal(d.Deny, []string{"Read", "Edit"}) || len(d.Rules()) != 2 || len(c.Deny) != 1 {
		t.Errorf("override deny: %v %v (file %v)", d.Deny, err, c.Deny)
	}
	d, err = d.Override("limits", []byte(`{"max_input_bytes": 10}`))
	if err != nil || d.Limits.MaxCallsPerTurn != 0 || d.Limits.MaxInputBytes != 10 {
		t.Errorf("override limits: %+v %v", d.Limits, err)
	}
	var none *config.Config
	if d, err := none.Override("deny", []byte(`["Write"]`)); err != nil || len(d.Deny) != 1 {
		t.Errorf("override without a file: %v", err)
	}
	if _, err := c.Override("deny", []byte("[\n 5]")); err == nil || err.Error() != `2:2: field "deny"[0]: want a rule string, found a number` {
		t.Errorf("bad override: %v", err)
	}
	if _, err := c.Override("deny", []byte("[Write")); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("bad JSON override: %v", err)
	}
}
