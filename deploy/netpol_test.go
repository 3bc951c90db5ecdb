package deploy_test

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// natsPods are the labels the NATS chart gives the pods of release "nats"
// (its nats.selectorLabels).
var natsPods = map[string]string{
	"app.kubernetes.io/name":      "nats",
	"app.kubernetes.io/instance":  "nats",
	"app.kubernetes.io/component": "nats",
}

// The chart's cluster routes sign in as the route user, the password and
// the route URLs coming from the Secret the README creates, one route to
// each member the chart runs.
func TestHelmRoutesSignIn(t *testing.T) {
	v := readYAML(t, "kubernetes/nats-values.yaml")[0]
	m := dig(v, "config", "cluster", "merge")
	if u, pw := str(dig(m, "authorization", "user")), str(dig(m, "authorization", "password")); u != "route" || pw != "<< $NATS_ROUTE_PASSWORD >>" {
		t.Errorf("nats-values.yaml: config.cluster.merge.authorization user %q password %q, want route and << $NATS_ROUTE_PASSWORD >>", u, pw)
	}
	if r := str(dig(m, "routes")); r != "<< $NATS_ROUTES >>" {
		t.Errorf("nats-values.yaml: config.cluster.merge.routes %q, want << $NATS_ROUTES >>", r)
	}
	readme := readme(t)
	for name, key := range map[string]string{"NATS_ROUTE_PASSWORD": "route-password", "NATS_ROUTES": "routes"} {
		ref := dig(v, "container", "env", name, "valueFrom", "secretKeyRef")
		if s, k := str(dig(ref, "name")), str(dig(ref, "key")); s != "toolwire-nats" || k != key || !documentedSecret(readme, s, k) {
			t.Errorf("nats-values.yaml: env %s from key %q of Secret %q, want key %s of toolwire-nats, created in README.md", name, k, s, key)
		}
	}
	// The routes the README puts in the Secret: one to each member, by
	// the names the chart gives them, signing in as the route user.
	lit := regexp.MustCompile(`--from-literal=routes="\[([^]]*)\]"`).FindStringSubmatch(readme)
	if lit == nil {
		t.Fatal("README.md: no --from-literal=routes=\"[...]\"")
	}
	port := 6222
	if n, ok := dig(v, "config", "cluster", "port").(int); ok {
		port = n
	}
	replicas, _ := dig(v, "config", "cluster", "replicas").(int)
	var hosts, want []string
	for _, r := range strings.Split(lit[1], ",") {
		u, err := url.Parse(strings.ReplaceAll(strings.TrimSpace(r), "$route", "pw"))
		if err != nil {
			t.Fatalf("README.md: route %s: %v", r, err)
		}
		if pw, _ := u.User.Password(); u.User.Username() != "route" || pw != "pw" {
			t.Errorf("README.md: route %s does not sign in as route with $route", r)
		}
		hosts = append(hosts, u.Host)
	}
	for i := range replicas {
		want = append(want, fmt.Sprintf("nats-%d.nats-headless:%d", i, port))
	}
	if !slices.Equal(hosts, want) {
		t.Errorf("README.md: routes to %v, the chart's members are %v", hosts, want)
	}
}

// The NetworkPolicy lets only toolwire's pods reach NATS's client port and
// only the NATS pods reach the route port.
func TestNATSNetworkPolicy(t *testing.T) {
	objs := manifests(t)
	pols := byKind(objs, "NetworkPolicy")
	if len(pols) != 1 {
		t.Fatalf("%d NetworkPolicies, want 1 for the NATS pods", len(pols))
	}
	p := pols[0]
	if sel := strMap(dig(p.m, "spec", "podSelector", "matchLabels")); !selects(sel, natsPods) {
		t.Errorf("%s: selects %v, not the chart's NATS pods %v", p, sel, natsPods)
	}
	if !slices.Contains(strs(t, dig(p.m, "spec", "policyTypes"), "policyTypes"), "Ingress") {
		t.Errorf("%s: policyTypes has no Ingress", p)
	}
	var stages []map[string]string
	for _, c := range deployments(t, objs) {
		stages = append(stages, c.labels)
	}
	v := readYAML(t, "kubernetes/nats-values.yaml")[0]
	clientPort, routePort := 4222, 6222
	if n, ok := dig(v, "config", "nats", "port").(int); ok {
		clientPort = n
	}
	if n, ok := dig(v, "config", "cluster", "port").(int); ok {
		routePort = n
	}
	covered := map[int]bool{}
	for i, rule := range list(dig(p.m, "spec", "ingress")) {
		ports := list(dig(rule, "ports"))
		if len(ports) == 0 {
			t.Errorf("%s: ingress rule %d opens every port", p, i)
		}
		var peers []map[string]string
		for _, peer := range list(dig(rule, "from")) {
			if len(peer.(map[string]any)) != 1 || dig(peer, "podSelector") == nil {
				t.Errorf("%s: ingress rule %d lets in %v, not only pods of the namespace", p, i, peer)
			}
			sel := strMap(dig(peer, "podSelector", "matchLabels"))
			if len(sel) == 0 {
				t.Errorf("%s: ingress rule %d lets in every pod", p, i)
			}
			peers = append(peers, sel)
		}
		lets := func(labels map[string]string) bool {
			return slices.ContainsFunc(peers, func(sel map[string]string) bool { return selects(sel, labels) })
		}
		for _, port := range ports {
			n, _ := dig(port, "port").(int)
			switch n {
			case clientPort:
				for _, l := range stages {
					if !lets(l) {
						t.Errorf("%s: port %d is closed to the stage pods %v", p, n, l)
					}
				}
				if len(peers) == 0 {
					t.Errorf("%s: port %d is open to any pod", p, n)
				}
			case routePort:
				if !lets(natsPods) || len(peers) == 0 || slices.ContainsFunc(stages, lets) {
					t.Errorf("%s: port %d is open to %v, want only the NATS pods", p, n, peers)
				}
			}
			covered[n] = true
		}
	}
	for _, n := range []int{clientPort, routePort} {
		if !covered[n] {
			t.Errorf("%s: no rule for port %d", p, n)
		}
	}
}
