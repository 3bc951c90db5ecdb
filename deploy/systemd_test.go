package deploy_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/toolwire/toolwire/executor"
)

// unit is a systemd unit file: its keys by section, each with its values.
type unit map[string]map[string][]string

func readUnit(t *testing.T, file string) unit {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u, section := unit{}, ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: %q is neither a [section] nor a key=value in one", file, n, line)
			}
			u[section][strings.TrimSpace(k)] = append(u[section][strings.TrimSpace(k)], strings.TrimSpace(v))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Unit", "Service", "Install"} {
		if u[s] == nil {
			t.Fatalf("%s: no [%s] section", file, s)
		}
	}
	return u
}

func (u unit) one(t *testing.T, key string) string {
	t.Helper()
	v := u["Service"][key]
	if len(v) != 1 {
		t.Fatalf("[Service] %s: %q, want one value", key, v)
	}
	return v[0]
}

// readEnv reads an EnvironmentFile of deploy/systemd by its installed path.
func readEnv(t *testing.T, installed string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("systemd", filepath.Base(installed)))
	if err != nil {
		t.Fatalf("EnvironmentFile %s: no systemd/%s: %v", installed, filepath.Base(installed), err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			env[k] = v
		}
	}
	return env
}

var envRef = regexp.MustCompile(`\$\{(\w+)\}|\$(\w+)`)

// execArgs expands an ExecStart as systemd does: ${VAR} is one word, $VAR
// splits on white space.
func execArgs(t *testing.T, line string, env map[string]string) []string {
	t.Helper()
	var out []string
	for _, w := range strings.Fields(line) {
		m := envRef.FindStringSubmatch(w)
		switch {
		case m == nil:
			out = append(out, w)
		case m[1] != "" && m[0] == w:
			out = append(out, env[m[1]])
		case m[2] != "" && m[0] == w:
			out = append(out, strings.Fields(env[m[2]])...)
		default:
			out = append(out, envRef.ReplaceAllStringFunc(w, func(r string) string { return env[strings.Trim(r, "${}")] }))
		}
	}
	return out
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// toolwireBinary builds cmd/toolwire once for the package's tests.
func toolwireBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the toolwire binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolwire-deploy-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "toolwire")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/toolwire").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("go build ./cmd/toolwire: %v", buildErr)
	}
	return binPath
}

// checkServeArgs has the real serve command parse args: with --help it
// exits 0 once every flag and value parsed, and fails on any other.
func checkServeArgs(t *testing.T, what string, args []string) {
	t.Helper()
	out, err := exec.Command(toolwireBinary(t), append(append([]string{"serve"}, args...), "--help")...).CombinedOutput()
	if err != nil {
		t.Errorf("%s: toolwire serve %q: %v\n%s", what, args, err, out)
	}
}

func TestStageUnit(t *testing.T) {
	u := readUnit(t, "systemd/toolwire-stage@.service")
	stop, err := time.ParseDuration(u.one(t, "TimeoutStopSec") + "s")
	if err != nil {
		t.Fatalf("TimeoutStopSec: %v", err)
	}
	if u.one(t, "KillSignal") != "SIGTERM" {
		t.Errorf("KillSignal %s: serve drains on SIGTERM", u.one(t, "KillSignal"))
	}
	for _, stage := range []string{"router", "executor", "reorder"} {
		env := map[string]string{}
		for _, f := range u["Service"]["EnvironmentFile"] {
			for k, v := range readEnv(t, strings.ReplaceAll(strings.TrimPrefix(f, "-"), "%i", stage)) {
				env[k] = v
			}
		}
		args := execArgs(t, strings.ReplaceAll(u.one(t, "ExecStart"), "%i", stage), env)
		if args[0] != "/usr/local/bin/toolwire" || args[1] != "serve" {
			t.Fatalf("toolwire-stage@%s runs %q, want /usr/local/bin/toolwire serve", stage, args)
		}
		if v, _ := flag(args, "stages"); v != stage {
			t.Errorf("toolwire-stage@%s: --stages %q", stage, v)
		}
		for _, f := range []string{"nats", "http"} {
			if v, ok := flag(args, f); !ok || v == "" {
				t.Errorf("toolwire-stage@%s: --%s is empty: its environment file does not set it", stage, f)
			}
		}
		if env["NATS_USER"] == "" || !strings.Contains(env["NATS_URL"], "nats-1") {
			t.Errorf("toolwire-stage@%s: NATS_USER %q, NATS_URL %q: want the cluster's members and a user", stage, env["NATS_USER"], env["NATS_URL"])
		}
		drain := executor.DefaultDrainTimeout
		if v, ok := flag(args, "drain-timeout"); ok {
			if drain, err = time.ParseDuration(v); err != nil {
				t.Fatal(err)
			}
		}
		if _, ok := flag(args, "api"); ok {
			drain += apiDrainSeconds * time.Second
		}
		if stop <= drain {
			t.Errorf("toolwire-stage@%s: TimeoutStopSec %s does not outlast the drain (%s)", stage, stop, drain)
		}
		checkServeArgs(t, "toolwire-stage@"+stage, args[2:])
	}
	// Bash's commands need a user, PID and mount namespace and a fresh
	// /proc: the unit must allow the namespaces and mount nothing over
	// /proc (a locked mount there makes the kernel refuse the fresh one).
	svc := u["Service"]
	for _, hides := range []string{"ProtectKernelTunables", "ProtectKernelLogs", "ProtectProc", "ProcSubset"} {
		if v := svc[hides]; len(v) > 0 && v[len(v)-1] != "no" && v[len(v)-1] != "default" && v[len(v)-1] != "all" {
			t.Errorf("%s=%s mounts over /proc: Bash's commands could not have a /proc of their own", hides, v[len(v)-1])
		}
	}
	if v := svc["RestrictNamespaces"]; len(v) > 0 {
		allowed := strings.Fields(v[len(v)-1])
		for _, ns := range []string{"user", "pid", "mnt"} {
			if !slices.Contains(allowed, ns) {
				t.Errorf("RestrictNamespaces=%s forbids the %s namespace Bash's commands need", v[len(v)-1], ns)
			}
		}
	}
}

func TestNATSUnit(t *testing.T) {
	setSecrets(t)
	u := readUnit(t, "systemd/toolwire-nats@.service")
	env := readEnv(t, u.one(t, "EnvironmentFile"))
	for k := range testSecrets {
		if _, ok := env[k]; !ok {
			t.Errorf("%s does not set %s, which nats/accounts.conf reads", u.one(t, "EnvironmentFile"), k)
		}
	}
	stop, err := time.ParseDuration(u.one(t, "TimeoutStopSec") + "s")
	if err != nil {
		t.Fatal(err)
	}
	if u.one(t, "KillSignal") != "SIGUSR2" {
		t.Errorf("KillSignal %s: want SIGUSR2, nats-server's lame duck mode", u.one(t, "KillSignal"))
	}
	for i := range members {
		n := string(rune('1' + i))
		args := strings.Fields(strings.ReplaceAll(u.one(t, "ExecStart"), "%i", n))
		if len(args) != 3 || filepath.Base(args[0]) != "nats-server" || args[1] != "--config" {
			t.Fatalf("ExecStart %q: want nats-server --config FILE", args)
		}
		conf := filepath.Join("nats", filepath.Base(args[2]))
		o, err := server.ProcessConfigFile(conf)
		if err != nil {
			t.Fatalf("toolwire-nats@%s: %v", n, err)
		}
		if want := "/var/lib/" + u.one(t, "StateDirectory"); o.StoreDir != want {
			t.Errorf("%s: store_dir %s, the unit's StateDirectory is %s", conf, o.StoreDir, want)
		}
		if stop <= o.LameDuckDuration+o.LameDuckGracePeriod {
			t.Errorf("TimeoutStopSec %s does not outlast %s's lame duck mode (%s)", stop, conf, o.LameDuckDuration+o.LameDuckGracePeriod)
		}
	}
}

func TestDeploymentArgsParse(t *testing.T) {
	for _, c := range deployments(t, manifests(t)) {
		checkServeArgs(t, c.dep.String(), c.args)
	}
}

// systemd's own checker, on instances of the templates whose programs are
// swapped for one that exists here.
func TestSystemdAnalyzeVerify(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("needs systemd-analyze (systemd) to verify the units")
	}
	bin := toolwireBinary(t)
	dir := t.TempDir()
	for file, instance := range map[string]string{"toolwire-stage@.service": "executor", "toolwire-nats@.service": "1"} {
		data, err := os.ReadFile(filepath.Join("systemd", file))
		if err != nil {
			t.Fatal(err)
		}
		text := regexp.MustCompile(`(?m)^ExecStart=\S+`).ReplaceAllString(string(data), "ExecStart="+bin)
		path := filepath.Join(dir, strings.Replace(file, "@", "@"+instance, 1))
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(sa, "verify", path).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("systemd-analyze verify %s: %v\n%s", file, err, out)
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
