package deploy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/toolwire/toolwire/embedded"
)

// Passwords the tests give the configurations' variables.
var testSecrets = map[string]string{
	"TOOLWIRE_NATS_PASSWORD": "tw-test-password-1234",
	"NATS_SYS_PASSWORD":      "sys-test-password-1234",
	"NATS_ROUTE_PASSWORD":    testRoutePassword,
	// NATS_ROUTES: nats.env's, with testRoutePassword in it.
}

const testRoutePassword = "0f3a9c71e5d2b84a"

func setSecrets(t *testing.T) {
	for k, v := range testSecrets {
		t.Setenv(k, v)
	}
	t.Setenv("NATS_ROUTES", natsEnvRoutes(t))
}

// natsEnvRoutes is NATS_ROUTES as deploy/systemd/nats.env has it, with
// the route password filled in as the install steps do.
func natsEnvRoutes(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("systemd/nats.env")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "NATS_ROUTES="); ok {
			return strings.ReplaceAll(strings.Trim(v, `"`), "<route-password>", testRoutePassword)
		}
	}
	t.Fatal("systemd/nats.env sets no NATS_ROUTES")
	return ""
}

// accounts is what a configuration gives its clients.
type accounts struct {
	accountOf  map[string]string // user -> account
	jetstream  map[string]bool   // accounts with JetStream
	system     string
	maxPayload int32
}

// startAccounts runs a lone server from conf (a file) with JetStream in a
// temporary store and reads back its accounts, as the server built them.
func startAccounts(t *testing.T, conf string) accounts {
	t.Helper()
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("%s: %v", conf, err)
	}
	opts.Host, opts.Port, opts.HTTPPort = "127.0.0.1", -1, 0
	opts.Cluster, opts.Routes = server.ClusterOpts{}, nil
	opts.JetStream, opts.StoreDir = true, t.TempDir()
	opts.NoLog, opts.NoSigs = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("%s: %v", conf, err)
	}
	go s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatalf("%s: the server did not start", conf)
	}
	a := accounts{accountOf: map[string]string{}, jetstream: map[string]bool{}, maxPayload: opts.MaxPayload}
	for _, u := range opts.Users {
		a.accountOf[u.Username] = u.Account.Name
		acc, err := s.LookupAccount(u.Account.Name)
		if err != nil {
			t.Fatal(err)
		}
		a.jetstream[acc.Name] = acc.JetStreamEnabled()
	}
	if sa := s.SystemAccount(); sa != nil {
		a.system = sa.Name
	}
	return a
}

// helm is what the tests read from nats-values.yaml.
type helm struct {
	accounts
	clientPort, monitorPort int
}

// chartRaw is the NATS chart's rule for config.merge: a string "<< x >>"
// is written unquoted (variables, sizes).
var chartRaw = regexp.MustCompile(`"<<\s+(.*?)\s+>>"`)

// helmValues renders config.merge of nats-values.yaml into a nats-server
// configuration the way the chart does (JSON, with the chart's unquoting)
// and reads its accounts from a server started on it.
func helmValues(t *testing.T) helm {
	t.Helper()
	setSecrets(t)
	docs := readYAML(t, "kubernetes/nats-values.yaml")
	if len(docs) != 1 {
		t.Fatalf("nats-values.yaml: %d documents, want 1", len(docs))
	}
	v := docs[0]
	for _, k := range []string{"cluster", "jetstream", "monitor"} {
		if dig(v, "config", k, "enabled") != true {
			t.Errorf("nats-values.yaml: config.%s.enabled is not true", k)
		}
	}
	if n, _ := dig(v, "config", "cluster", "replicas").(int); n != 3 {
		t.Errorf("nats-values.yaml: config.cluster.replicas %d, want 3", n)
	}
	h := helm{clientPort: 4222, monitorPort: 8222} // the chart's defaults
	if n, ok := dig(v, "config", "nats", "port").(int); ok {
		h.clientPort = n
	}
	if n, ok := dig(v, "config", "monitor", "port").(int); ok {
		h.monitorPort = n
	}
	// toPrettyRawJson: indented, and <, > and & as they are.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(dig(v, "config", "merge")); err != nil {
		t.Fatal(err)
	}
	merged := buf.Bytes()
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, chartRaw.ReplaceAll(merged, []byte("$1")), 0o600); err != nil {
		t.Fatal(err)
	}
	h.accounts = startAccounts(t, conf)
	// The variables the merge reads are set from the Secret in the pod.
	env := map[string]bool{}
	readme := readme(t)
	envs, _ := dig(v, "container", "env").(map[string]any)
	for name, e := range envs {
		ref := dig(e, "valueFrom", "secretKeyRef")
		if s, key := str(dig(ref, "name")), str(dig(ref, "key")); s != "" {
			env[name] = true
			if !documentedSecret(readme, s, key) {
				t.Errorf("nats-values.yaml: env %s reads key %s of Secret %s, which README.md does not say how to create", name, key, s)
			}
		}
	}
	for _, m := range chartRaw.FindAllSubmatch(merged, -1) {
		if name, ok := strings.CutPrefix(string(m[1]), "$"); ok && !env[name] {
			t.Errorf("nats-values.yaml: config.merge reads $%s, which container.env does not take from a Secret", name)
		}
	}
	return h
}

func TestHelmValuesMatchTheClusterConfiguration(t *testing.T) {
	h := helmValues(t)
	// nats-server includes relative to the including file.
	dir := t.TempDir()
	data, err := os.ReadFile("nats/accounts.conf")
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "accounts-only.conf")
	if err := os.WriteFile(filepath.Join(dir, "accounts.conf"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("include accounts.conf\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := startAccounts(t, conf)
	if fmt.Sprint(h.accountOf) != fmt.Sprint(file.accountOf) || fmt.Sprint(h.jetstream) != fmt.Sprint(file.jetstream) || h.system != file.system {
		t.Errorf("the chart's accounts differ from nats/accounts.conf:\nchart: users %v, JetStream %v, system %s\nfile:  users %v, JetStream %v, system %s",
			h.accountOf, h.jetstream, h.system, file.accountOf, file.jetstream, file.system)
	}
	if h.accountOf["toolwire"] != "TOOLWIRE" || !h.jetstream["TOOLWIRE"] || h.system != "SYS" {
		t.Errorf("want user toolwire in account TOOLWIRE with JetStream and system account SYS; have %+v", h.accounts)
	}
	if h.maxPayload != embedded.DefaultMaxPayload {
		t.Errorf("nats-values.yaml: max_payload %d, toolwire's embedded server takes %d", h.maxPayload, embedded.DefaultMaxPayload)
	}
}

// members are the cluster configuration's files.
var members = []string{"nats/nats-1.conf", "nats/nats-2.conf", "nats/nats-3.conf"}

func TestClusterConfiguration(t *testing.T) {
	setSecrets(t)
	names := map[string]bool{}
	var routes []string
	for _, f := range members {
		o, err := server.ProcessConfigFile(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !o.JetStream || o.StoreDir == "" || o.JetStreamMaxStore <= 0 || o.JetStreamMaxMemory <= 0 {
			t.Errorf("%s: JetStream %v, store %q, max file %d, max memory %d: want it on, with a store and explicit bounds", f, o.JetStream, o.StoreDir, o.JetStreamMaxStore, o.JetStreamMaxMemory)
		}
		if o.Cluster.Name != "toolwire" || o.Cluster.Port == 0 || len(o.Routes) != len(members) {
			t.Errorf("%s: cluster %q port %d, %d routes: want cluster toolwire and a route to each member", f, o.Cluster.Name, o.Cluster.Port, len(o.Routes))
		}
		if o.HTTPPort == 0 {
			t.Errorf("%s: no monitoring port (KEDA and Prometheus read it)", f)
		}
		if o.MaxPayload != embedded.DefaultMaxPayload {
			t.Errorf("%s: max_payload %d, toolwire's embedded server takes %d", f, o.MaxPayload, embedded.DefaultMaxPayload)
		}
		if o.LameDuckDuration <= 0 {
			t.Errorf("%s: no lame_duck_duration", f)
		}
		names[o.ServerName] = true
		var rs []string
		for _, r := range o.Routes {
			rs = append(rs, r.String())
		}
		slices.Sort(rs)
		if routes == nil {
			routes = rs
		} else if !slices.Equal(rs, routes) {
			t.Errorf("%s: routes %v, another member's are %v", f, rs, routes)
		}
		if u := o.Users; len(u) == 0 {
			t.Errorf("%s: no users", f)
		}
		if o.Cluster.Username != "route" || o.Cluster.Password != testRoutePassword {
			t.Errorf("%s: routes sign in as %q with %q: want the user route with $NATS_ROUTE_PASSWORD", f, o.Cluster.Username, o.Cluster.Password)
		}
		for _, r := range o.Routes {
			if pw, _ := r.User.Password(); r.User.Username() != o.Cluster.Username || pw != o.Cluster.Password {
				t.Errorf("%s: route to %s does not sign in as the route user", f, r.Host)
			}
		}
	}
	if len(names) != len(members) {
		t.Errorf("server names %v: want one per member", names)
	}
	for _, r := range routes {
		u, err := url.Parse(r)
		if err != nil {
			t.Fatal(err)
		}
		if host := u.Hostname(); !names[host] {
			t.Errorf("route %s goes to %s, which is no member's server_name (%v)", r, host, names)
		}
	}
}

// The passwords are variables: without them the server refuses to start,
// and no secret is in the files.
func TestClusterConfigurationNeedsItsSecrets(t *testing.T) {
	for k := range testSecrets {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("NATS_ROUTES", "")
	os.Unsetenv("NATS_ROUTES")
	_, err := server.ProcessConfigFile(members[0])
	named := false
	for k := range testSecrets {
		named = named || err != nil && strings.Contains(err.Error(), k)
	}
	if !named {
		t.Fatalf("%s without the password variables: %v, want an error naming one", members[0], err)
	}
}
