package deploy_test

import (
	"encoding/json"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/executor"
	"github.com/toolwire/toolwire/internal/config"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/subjects"
)

// helmRelease is the release name deploy/README.md installs the NATS chart
// under; the chart names its Services and servers after it.
const helmRelease = "nats"

// apiDrainSeconds is how long serve gives the HTTP API's uploads on
// SIGTERM before the stages drain (cmd/toolwire/serve_api.go).
const apiDrainSeconds = 10

// container is the one container of a Deployment, with its parsed flags.
type container struct {
	dep    object
	m      map[string]any
	args   []string
	labels map[string]string
}

func deployments(t *testing.T, objs []object) []container {
	t.Helper()
	var out []container
	for _, d := range byKind(objs, "Deployment") {
		cs := list(dig(d.m, "spec", "template", "spec", "containers"))
		if len(cs) != 1 {
			t.Fatalf("%s: %d containers, want 1", d, len(cs))
		}
		c, _ := cs[0].(map[string]any)
		cmd := strs(t, c["command"], d.String()+" command")
		args := strs(t, c["args"], d.String()+" args")
		if !slices.Equal(cmd, []string{"toolwire"}) || len(args) == 0 || args[0] != "serve" {
			t.Fatalf("%s: runs %q %q, want toolwire serve ...", d, cmd, args)
		}
		out = append(out, container{dep: d, m: c, args: args[1:], labels: strMap(dig(d.m, "spec", "template", "metadata", "labels"))})
	}
	if len(out) == 0 {
		t.Fatal("no Deployment in the kustomization's resources")
	}
	return out
}

// port is the containerPort of the container's port named name.
func (c container) port(name string) (int, bool) {
	for _, p := range list(c.m["ports"]) {
		if str(dig(p, "name")) == name {
			n, ok := dig(p, "containerPort").(int)
			return n, ok
		}
	}
	return 0, false
}

func (c container) flag(t *testing.T, name string) string {
	t.Helper()
	v, ok := flag(c.args, name)
	if !ok {
		t.Fatalf("%s: no --%s in its args %q", c.dep, name, c.args)
	}
	return v
}

// stageOf returns the Deployment whose --stages is stage.
func stageOf(t *testing.T, cs []container, stage string) container {
	t.Helper()
	for _, c := range cs {
		if v, _ := flag(c.args, "stages"); v == stage {
			return c
		}
	}
	t.Fatalf("no Deployment runs --stages=%s", stage)
	return container{}
}

func TestKustomizationListsEveryManifest(t *testing.T) {
	k := kustomization(t)
	listed := strs(t, k["resources"], "resources")
	for _, r := range listed {
		if _, err := os.Stat(filepath.Join("kubernetes", r)); err != nil {
			t.Errorf("kustomization lists %s: %v", r, err)
		}
	}
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		base := filepath.Base(f)
		// The chart's values are helm's input, not a manifest.
		if base == "kustomization.yaml" || base == "nats-values.yaml" {
			continue
		}
		if !slices.Contains(listed, base) {
			t.Errorf("kubernetes/%s is not in kustomization.yaml's resources", base)
		}
	}
	generated := map[string]bool{}
	for _, g := range list(k["configMapGenerator"]) {
		for _, f := range strs(t, dig(g, "files"), "configMapGenerator files") {
			if _, err := os.Stat(filepath.Join("kubernetes", f)); err != nil {
				t.Errorf("configMapGenerator %s: %v", str(dig(g, "name")), err)
			}
			generated[f] = true
		}
	}
	cfgs, _ := filepath.Glob("kubernetes/config/*")
	for _, f := range cfgs {
		if rel, _ := filepath.Rel("kubernetes", f); !generated[rel] {
			t.Errorf("%s is in no configMapGenerator", f)
		}
	}
	for _, o := range manifests(t) {
		if ns := str(dig(o.m, "metadata", "namespace")); o.kind() != "Namespace" && ns != str(k["namespace"]) {
			t.Errorf("%s: namespace %q, the kustomization's is %q", o, ns, str(k["namespace"]))
		}
	}
}

func TestDeploymentsWiring(t *testing.T) {
	objs := manifests(t)
	values := helmValues(t)
	for _, c := range deployments(t, objs) {
		d := c.dep
		sel := strMap(dig(d.m, "spec", "selector", "matchLabels"))
		if !selects(sel, c.labels) {
			t.Errorf("%s: selector %v does not match its pod labels %v", d, sel, c.labels)
		}
		stage := c.flag(t, "stages")
		if c.labels["app.kubernetes.io/component"] != stage {
			t.Errorf("%s: runs --stages=%s but its pods are labelled component %q", d, stage, c.labels["app.kubernetes.io/component"])
		}

		// Probes: /healthz and /readyz on the port --http listens on.
		_, httpPort, err := net.SplitHostPort(c.flag(t, "http"))
		if err != nil {
			t.Fatalf("%s: --http: %v", d, err)
		}
		for probe, path := range map[string]string{"livenessProbe": "/healthz", "startupProbe": "/healthz", "readinessProbe": "/readyz"} {
			get := dig(c.m, probe, "httpGet")
			if get == nil {
				t.Errorf("%s: no %s.httpGet", d, probe)
				continue
			}
			if p := str(dig(get, "path")); p != path {
				t.Errorf("%s: %s path %q, want %q", d, probe, p, path)
			}
			name := str(dig(get, "port"))
			n, ok := c.port(name)
			if !ok {
				t.Errorf("%s: %s uses port %q, which the container does not declare", d, probe, name)
			} else if strconv.Itoa(n) != httpPort {
				t.Errorf("%s: %s port %s is %d, --http listens on %s", d, probe, name, n, httpPort)
			}
		}
		if api, ok := flag(c.args, "api"); ok {
			_, p, _ := net.SplitHostPort(api)
			if n, ok := c.port("api"); !ok || strconv.Itoa(n) != p {
				t.Errorf("%s: --api %s, but its port named api is %d (declared: %v)", d, api, n, ok)
			}
		}

		// NATS: the chart's client Service, as the account's user.
		u, err := url.Parse(c.flag(t, "nats"))
		if err != nil {
			t.Fatalf("%s: --nats: %v", d, err)
		}
		if want := helmRelease + ":" + strconv.Itoa(values.clientPort); u.Host != want {
			t.Errorf("%s: --nats %s, the chart's Service is %s", d, u, want)
		}
		if user := c.flag(t, "user"); values.accountOf[user] != "TOOLWIRE" {
			t.Errorf("%s: --user %s is no user of the chart's TOOLWIRE account (users: %v)", d, user, values.accountOf)
		}

		// Graceful stop: the grace outlasts the drain (and the API's).
		grace, _ := dig(d.m, "spec", "template", "spec", "terminationGracePeriodSeconds").(int)
		drain := executor.DefaultDrainTimeout
		if v, ok := flag(c.args, "drain-timeout"); ok {
			if drain, err = time.ParseDuration(v); err != nil {
				t.Fatalf("%s: --drain-timeout: %v", d, err)
			}
		}
		need := drain
		if _, ok := flag(c.args, "api"); ok {
			need += apiDrainSeconds * time.Second
		}
		if time.Duration(grace)*time.Second <= need {
			t.Errorf("%s: terminationGracePeriodSeconds %d does not outlast the drain (%s)", d, grace, need)
		}

		// What ops teams expect of a pod's security. The executors run
		// Bash, whose commands need a user and PID namespace, which the
		// RuntimeDefault seccomp profile and a masked /proc refuse: their
		// pods relax both, inside a user namespace of the pod's own.
		psc := dig(d.m, "spec", "template", "spec", "securityContext")
		sc := c.m["securityContext"]
		seccomp := "RuntimeDefault"
		if stage == "executor" {
			seccomp = "Unconfined"
			if dig(d.m, "spec", "template", "spec", "hostUsers") != false || str(dig(sc, "procMount")) != "Unmasked" ||
				str(dig(psc, "appArmorProfile", "type")) != "Unconfined" {
				t.Errorf("%s: want hostUsers false, an Unconfined AppArmor profile and procMount Unmasked, for Bash's namespaces", d)
			}
		}
		if dig(psc, "runAsNonRoot") != true || str(dig(psc, "seccompProfile", "type")) != seccomp {
			t.Errorf("%s: pod securityContext %v: want runAsNonRoot and the %s seccomp profile", d, psc, seccomp)
		}
		if dig(sc, "readOnlyRootFilesystem") != true || dig(sc, "allowPrivilegeEscalation") != false ||
			!slices.Equal(strs(t, dig(sc, "capabilities", "drop"), "drop"), []string{"ALL"}) {
			t.Errorf("%s: container securityContext %v: want a read-only root, no privilege escalation, every capability dropped", d, sc)
		}
	}
}

func TestConfigFilesMountedAndValid(t *testing.T) {
	k := kustomization(t)
	generated := map[string][]string{}
	for _, g := range list(k["configMapGenerator"]) {
		generated[str(dig(g, "name"))] = strs(t, dig(g, "files"), "files")
	}
	readme := readme(t)
	var parsed []map[string]json.RawMessage
	for _, c := range deployments(t, manifests(t)) {
		d := c.dep
		path := c.flag(t, "config")
		mounts := map[string]map[string]any{} // mount path -> volume
		for _, vm := range list(c.m["volumeMounts"]) {
			for _, v := range list(dig(d.m, "spec", "template", "spec", "volumes")) {
				if str(dig(v, "name")) == str(dig(vm, "name")) {
					mounts[str(dig(vm, "mountPath"))] = v.(map[string]any)
				}
			}
		}
		vol, ok := mounts[filepath.Dir(path)]
		if !ok {
			t.Fatalf("%s: --config %s is in no mounted volume (mounts: %v)", d, path, mounts)
		}
		files, ok := generated[str(dig(vol, "configMap", "name"))]
		if !ok {
			t.Fatalf("%s: --config %s is on volume %v, which is no ConfigMap the kustomization generates", d, path, vol)
		}
		i := slices.IndexFunc(files, func(f string) bool { return filepath.Base(f) == filepath.Base(path) })
		if i < 0 {
			t.Fatalf("%s: --config %s: the ConfigMap holds %v", d, path, files)
		}
		data, err := os.ReadFile(filepath.Join("kubernetes", files[i]))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Parse(data)
		if err != nil {
			t.Fatalf("%s: %s: %v", d, files[i], err)
		}
		// Bash fails closed: a node where a command would see serve's
		// environment refuses it rather than running it.
		if !cfg.BashPolicy().Strict {
			t.Errorf("%s: %s does not set bash.strict", d, files[i])
		}
		// The API's token files: on a mounted Secret that the README says
		// how to create.
		if cfg.API != nil {
			for tenant, tok := range cfg.API.Tenants {
				if tok.Token != "" {
					t.Errorf("%s: tenant %s has its token inline in a ConfigMap", files[i], tenant)
				}
				v, ok := mounts[filepath.Dir(tok.TokenFile)]
				secret := str(dig(v, "secret", "secretName"))
				if !ok || secret == "" {
					t.Errorf("%s: %s's token_file %s is on no mounted Secret", d, tenant, tok.TokenFile)
				} else if !documentedSecret(readme, secret, filepath.Base(tok.TokenFile)) {
					t.Errorf("README.md does not say how to create Secret %s with key %s", secret, filepath.Base(tok.TokenFile))
				}
			}
		} else if _, ok := flag(c.args, "api"); ok {
			t.Errorf("%s: serves --api off loopback but %s names no tokens", d, files[i])
		}
		for _, e := range list(c.m["env"]) {
			ref := dig(e, "valueFrom", "secretKeyRef")
			if s, key := str(dig(ref, "name")), str(dig(ref, "key")); s != "" && !documentedSecret(readme, s, key) {
				t.Errorf("%s: env %s reads key %s of Secret %s, which README.md does not say how to create", d, str(dig(e, "name")), key, s)
			}
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(data, &fields); err != nil {
			t.Fatal(err)
		}
		delete(fields, "api")
		parsed = append(parsed, fields)
	}
	// The files differ in "api" alone: the stages apply one policy.
	for _, f := range parsed[1:] {
		a, _ := json.Marshal(parsed[0])
		b, _ := json.Marshal(f)
		if string(a) != string(b) {
			t.Errorf("the configuration files differ beyond \"api\":\n%s\n%s", a, b)
		}
	}
}

func TestAPIServiceTargetsThePods(t *testing.T) {
	objs := manifests(t)
	cs := deployments(t, objs)
	svcs := byKind(objs, "Service")
	if len(svcs) == 0 {
		t.Fatal("no Service")
	}
	for _, s := range svcs {
		sel := strMap(dig(s.m, "spec", "selector"))
		var hit []container
		for _, c := range cs {
			if selects(sel, c.labels) {
				hit = append(hit, c)
			}
		}
		if len(hit) == 0 {
			t.Errorf("%s: selector %v selects no Deployment's pods", s, sel)
		}
		for _, p := range list(dig(s.m, "spec", "ports")) {
			target := str(dig(p, "targetPort"))
			for _, c := range hit {
				if _, ok := c.port(target); !ok {
					t.Errorf("%s: targetPort %q, which %s does not declare", s, target, c.dep)
				}
			}
		}
	}
}

func TestExecutorDisruptionBudget(t *testing.T) {
	objs := manifests(t)
	cs := deployments(t, objs)
	exec := stageOf(t, cs, subjects.StageExecutor)
	pdbs := byKind(objs, "PodDisruptionBudget")
	if len(pdbs) != 1 {
		t.Fatalf("%d PodDisruptionBudgets, want 1 (the executors')", len(pdbs))
	}
	sel := strMap(dig(pdbs[0].m, "spec", "selector", "matchLabels"))
	for _, c := range cs {
		if got, want := selects(sel, c.labels), c.dep.name() == exec.dep.name(); got != want {
			t.Errorf("%s: selects %s: %v, want %v", pdbs[0], c.dep, got, want)
		}
	}
}

func TestScaledObjectWatchesTheExecutorConsumer(t *testing.T) {
	objs := manifests(t)
	exec := stageOf(t, deployments(t, objs), subjects.StageExecutor)
	values := helmValues(t)
	sos := byKind(objs, "ScaledObject")
	if len(sos) != 1 {
		t.Fatalf("%d ScaledObjects, want 1", len(sos))
	}
	so := sos[0]
	if ref := dig(so.m, "spec", "scaleTargetRef"); str(dig(ref, "name")) != exec.dep.name() || str(dig(ref, "kind")) != "Deployment" {
		t.Errorf("%s: scaleTargetRef %v, want Deployment %s", so, ref, exec.dep.name())
	}
	triggers := list(dig(so.m, "spec", "triggers"))
	if len(triggers) != 1 || str(dig(triggers[0], "type")) != "nats-jetstream" {
		t.Fatalf("%s: triggers %v, want one nats-jetstream", so, triggers)
	}
	md := strMap(dig(triggers[0], "metadata"))

	// The stream and consumer the executors of the default pool take their
	// calls from, named as provision creates them.
	sp := subjects.Default()
	var stream string
	for _, s := range provision.StageStreams(sp) {
		if s.Stage == subjects.StageExecutor {
			stream = s.Stream
		}
	}
	if md["stream"] != stream {
		t.Errorf("%s: stream %q, the executors consume %q", so, md["stream"], stream)
	}
	if want := sp.ExecConsumer(subjects.DefaultPool); md["consumer"] != want {
		t.Errorf("%s: consumer %q, the default pool's is %q", so, md["consumer"], want)
	}
	if user := exec.flag(t, "user"); md["account"] != values.accountOf[user] {
		t.Errorf("%s: account %q, the executors sign in as %s of account %q", so, md["account"], user, values.accountOf[user])
	}
	if !values.jetstream[md["account"]] {
		t.Errorf("%s: account %q has no JetStream in the chart's values", so, md["account"])
	}
	// The chart's headless Service: in a cluster KEDA asks the consumer's
	// leader at <server>.<endpoint>, and the servers are the StatefulSet's
	// pods, named <release>-N.
	ns := str(kustomization(t)["namespace"])
	want := net.JoinHostPort(helmRelease+"-headless."+ns+".svc.cluster.local", strconv.Itoa(values.monitorPort))
	if md["natsServerMonitoringEndpoint"] != want {
		t.Errorf("%s: natsServerMonitoringEndpoint %q, want %q", so, md["natsServerMonitoringEndpoint"], want)
	}
	if md["useHttps"] != "false" {
		t.Errorf("%s: useHttps %q; the chart's monitoring port is plain HTTP", so, md["useHttps"])
	}
	for _, k := range []string{"lagThreshold", "activationLagThreshold"} {
		if n, err := strconv.Atoi(md[k]); err != nil || n < 0 {
			t.Errorf("%s: %s %q is not a count", so, k, md[k])
		}
	}
	minR, _ := dig(so.m, "spec", "minReplicaCount").(int)
	maxR, _ := dig(so.m, "spec", "maxReplicaCount").(int)
	if minR < 2 || maxR < minR {
		t.Errorf("%s: min %d, max %d replicas: want at least 2, max above min", so, minR, maxR)
	}
}

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// documentedSecret reports whether readme has a kubectl command creating
// the Secret name with key.
func documentedSecret(readme, name, key string) bool {
	for _, line := range strings.Split(readme, "\n") {
		if strings.Contains(line, "create secret generic "+name+" ") &&
			(strings.Contains(line, "--from-literal="+key+"=") || strings.Contains(line, "--from-file="+key+"=")) {
			return true
		}
	}
	return false
}
