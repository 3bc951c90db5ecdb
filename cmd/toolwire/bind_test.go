package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/pflag"
	"github.com/toolwire/toolwire/internal/config"
)

type sourced struct {
	Value any
	From  string
}

// printed runs `toolwire config print --format json` through the root
// command and returns its sections.
func printed(t *testing.T, args ...string) map[string]map[string]sourced {
	t.Helper()
	out, code, err := runSub(t, newRoot, "", append([]string{"config", "print", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("config print %v: %d %v", args, code, err)
	}
	var e map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]sourced{}
	for _, sec := range []string{"nats", "log", "serve", "cluster", "proxy"} {
		m := map[string]sourced{}
		if err := json.Unmarshal(e[sec], &m); err != nil {
			t.Fatalf("%s: %v\n%s", sec, err, out)
		}
		got[sec] = m
	}
	return got
}

// TestPrecedence: a flag beats the setting's variable, which beats the
// file, which beats the default; the file may come from TOOLWIRE_CONFIG,
// and YAML and JSON files say the same.
func TestPrecedence(t *testing.T) {
	for _, file := range []struct{ name, body string }{
		{"toolwire.yaml", "serve:\n  listen: 127.0.0.1:1001\n  http: 127.0.0.1:1002\n  store: /from/file\n  drain_timeout: 90s\nnats:\n  password: file-secret-pw\nproxy:\n  tenant: filetenant\n"},
		{"toolwire.json", `{"serve": {"listen": "127.0.0.1:1001", "http": "127.0.0.1:1002", "store": "/from/file", "drain_timeout": "90s"},
 "nats": {"password": "file-secret-pw"}, "proxy": {"tenant": "filetenant"}}`},
	} {
		t.Run(file.name, func(t *testing.T) {
			path := writeTemp(t, file.name, file.body)
			t.Setenv("TOOLWIRE_SERVE_LISTEN", "127.0.0.1:2001")
			t.Setenv("TOOLWIRE_SERVE_HTTP", "127.0.0.1:2002")
			t.Setenv("TOOLWIRE_PROXY_TENANT", "envtenant")
			t.Setenv("TOOLWIRE_LOG_LEVEL", "debug")
			t.Setenv(envConfig, path)
			got := printed(t, "--listen", "127.0.0.1:3001")
			for _, c := range []struct {
				sec, key string
				value    any
				from     string
			}{
				{"serve", "listen", "127.0.0.1:3001", "flag --listen"},         // flag, variable and file
				{"serve", "http", "127.0.0.1:2002", "env TOOLWIRE_SERVE_HTTP"}, // variable and file
				{"serve", "store", "/from/file", "file"},                       // file
				{"serve", "drain_timeout", "1m30s", "file"},                    // file, a duration
				{"serve", "reorders", float64(1), "default"},                   // nothing
				{"log", "level", "debug", "env TOOLWIRE_LOG_LEVEL"},            // variable
				{"proxy", "tenant", "envtenant", "env TOOLWIRE_PROXY_TENANT"},  // not a flag of serve
				{"nats", "password", config.Redacted, "file"},                  // a secret
				{"cluster", "listen", "127.0.0.1:6222", "default"},             // a default
				{"proxy", "listen", "127.0.0.1:8081", "default"},               // the same flag name, another setting
				{"serve", "api", "127.0.0.1:8081", "default"},                  // the default
				{"nats", "tlsfirst", false, "default"},                         // a boolean
				{"serve", "stages", "router,executor,reorder", "default"},      // a list
				{"cluster", "replicas", float64(0), "default"},                 // an integer
				{"nats", "url", "", "default"},                                 // serve's default
			} {
				if g := got[c.sec][c.key]; g.Value != c.value || g.From != c.from {
					t.Errorf("%s.%s = %v from %q; want %v from %q", c.sec, c.key, g.Value, g.From, c.value, c.from)
				}
			}
			out, _, _ := runSub(t, newRoot, "", "config", "print", "--format", "yaml")
			if strings.Contains(out, "file-secret-pw") || !strings.Contains(out, "listen: {value: '127.0.0.1:2001', from: env TOOLWIRE_SERVE_LISTEN}") {
				t.Errorf("yaml:\n%s", out)
			}
		})
	}
}

// TestBadVariable: a variable whose value its setting refuses stops the
// command with the variable's name and why, before it does anything.
func TestBadVariable(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"TOOLWIRE_SERVE_EXECUTORS", "two", `TOOLWIRE_SERVE_EXECUTORS="two": want an integer, found "two"`},
		{"TOOLWIRE_SERVE_DRAIN_TIMEOUT", "-3s", `TOOLWIRE_SERVE_DRAIN_TIMEOUT="-3s": want a positive duration, found -3s`},
		{"TOOLWIRE_SERVE_API", "8081", `TOOLWIRE_SERVE_API="8081": want host:port`},
		{"TOOLWIRE_NATS_TLSFIRST", "maybe", `TOOLWIRE_NATS_TLSFIRST="maybe": want true or false`},
		{"TOOLWIRE_MAX_TOOL_USE_CONCURRENCY", "-1", `TOOLWIRE_MAX_TOOL_USE_CONCURRENCY="-1": want 0 or more`},
		{"TOOLWIRE_DENY", `["Bash(rm"]`, `TOOLWIRE_DENY: 1:2: field "deny"[0]: rule "Bash(rm": missing ")"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(c.name, c.value)
			// Should serve take the value, it stops after a while.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			root := newRoot()
			root.SetArgs([]string{"serve", "--store", t.TempDir(), "--listen", "127.0.0.1:" + strconv.Itoa(freePort(t)), "--http", ""})
			root.SetOut(io.Discard)
			err := root.ExecuteContext(ctx)
			code := exitCode(err)
			if code != 1 || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("serve with %s=%q: %d %v; want %q", c.name, c.value, code, err, c.want)
			}
		})
	}
	// A command other than serve reads the variables of its own flags.
	t.Setenv("TOOLWIRE_PROXY_UPSTREAM", "ftp://model")
	if _, _, err := runSub(t, newRoot, "", "proxy"); err == nil || !strings.Contains(err.Error(), `TOOLWIRE_PROXY_UPSTREAM="ftp://model": want an http:// or https:// URL`) {
		t.Errorf("proxy: %v", err)
	}
	bad := writeTemp(t, "bad.yaml", "proxy:\n  format: anthropic\n  tenant: a.b\n")
	if _, _, err := runSub(t, newRoot, "", "proxy", "--config", bad); err == nil || !strings.Contains(err.Error(), bad+`:3:11: field "proxy".tenant`) {
		t.Errorf("proxy with a bad file: %v", err)
	}
}

// TestBindings: every flag of the commands that take settings stands for
// a setting (or is named here as a flag only), and its default is the
// setting's, so that the reference cannot drift from the flags.
func TestBindings(t *testing.T) {
	flagOnly := map[string]bool{"config": true, "help": true}
	root := newRoot()
	for _, name := range []string{"serve", "proxy"} {
		cmd, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		keys := bindings[name]
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			key, ok := keys[f.Name]
			if !ok {
				if !flagOnly[f.Name] {
					t.Errorf("%s --%s stands for no setting: add it to config.Config and bind.go", name, f.Name)
				}
				return
			}
			s, ok := config.Lookup(key)
			if !ok {
				t.Errorf("%s --%s: no setting %s", name, f.Name, key)
				return
			}
			// nats.url's default is each command's own (documented).
			if f.DefValue != s.Default && key != "nats.url" {
				t.Errorf("%s --%s: default %q, the setting %s says %q", name, f.Name, f.DefValue, key, s.Default)
			}
		})
	}
	for name, keys := range bindings {
		cmd, _, err := root.Find([]string{name})
		if err != nil || cmd.Name() != name {
			t.Errorf("no command %s: %v", name, err)
			continue
		}
		for flag := range keys {
			if cmd.Flags().Lookup(flag) == nil && cmd.PersistentFlags().Lookup(flag) == nil {
				t.Errorf("%s has no flag --%s", name, flag)
			}
		}
		if cmd.Flags().Lookup("config") == nil && cmd.PersistentFlags().Lookup("config") == nil {
			t.Errorf("%s has no --config", name)
		}
	}
}

// TestServeFromYAML: `toolwire serve` given nothing but a YAML file (by
// TOOLWIRE_CONFIG) listens where the file says.
func TestServeFromYAML(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	natsAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	httpAddr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	path := writeTemp(t, "toolwire.yaml", fmt.Sprintf(`serve:
  listen: %s
  http: %s
  api: ""
  store: %s
  stages: router,executor,reorder
  executors: 1
  drain_timeout: 5s
log:
  format: json
`, natsAddr, httpAddr, filepath.Join(t.TempDir(), "data")))
	cmd := exec.Command(sharedBinary(t), "serve")
	cmd.Env = append(os.Environ(), envConfig+"="+path)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(stderr); logs <- b }()
	defer func() { _ = cmd.Process.Kill() }()

	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + httpAddr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no ready /readyz on the file's address %s: %v\n%s", httpAddr, err, <-logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	resp, err := http.Get("http://" + httpAddr + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	nc, err := nats.Connect("nats://" + natsAddr)
	if err != nil {
		t.Fatalf("NATS on the file's address %s: %v", natsAddr, err)
	}
	nc.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve exited: %v", err)
	}
	// log.format json from the file: every line is a JSON object.
	for _, line := range strings.Split(strings.TrimSpace(string(<-logs)), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("log line not JSON: %s", line)
		}
	}
}
