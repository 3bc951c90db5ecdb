package deploy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
)

// freePort is testenv.FreePort, by the short name these tests use.
func freePort(t *testing.T) int { return testenv.FreePort(t) }

// The three member files boot a JetStream cluster (their ports moved to
// free ones on loopback, their stores to temporary directories); the
// stages sign in as the account's user and provision it; the monitoring
// endpoint shows the executors' consumer where KEDA looks for it.
func TestClusterBootsFromTheConfiguration(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a 3-node NATS cluster")
	}
	setSecrets(t)
	type member struct {
		opts                   *server.Options
		client, route, monitor int
	}
	var ms []member
	var servers []*server.Server
	var byName map[string]int
	// A port found free may be taken by another test's connection before
	// its member listens on it (the members then never form a cluster):
	// the boot is tried again on new ports.
	for attempt := 1; ; attempt++ {
		ms, servers, byName = nil, nil, map[string]int{}
		for i, f := range members {
			o, err := server.ProcessConfigFile(f)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			ms = append(ms, member{opts: o, client: freePort(t), route: freePort(t), monitor: freePort(t)})
			byName[o.ServerName] = i
		}
		for _, m := range ms {
			o := m.opts
			o.Host, o.Port = "127.0.0.1", m.client
			o.Cluster.Host, o.Cluster.Port = "127.0.0.1", m.route
			o.HTTPHost, o.HTTPPort = "127.0.0.1", m.monitor
			o.StoreDir = t.TempDir()
			o.NoLog, o.NoSigs = true, true
			for _, r := range o.Routes {
				j, ok := byName[r.Hostname()]
				if !ok {
					t.Fatalf("%s: route %s names no member", o.ServerName, r)
				}
				r.Host = "127.0.0.1:" + strconv.Itoa(ms[j].route)
			}
			s, err := server.NewServer(o)
			if err != nil {
				t.Fatalf("%s: %v", o.ServerName, err)
			}
			go s.Start()
			t.Cleanup(s.Shutdown) // also for a boot given up: Shutdown may be called twice
			servers = append(servers, s)
		}
		var notReady []string
		for i, s := range servers {
			if !s.ReadyForConnections(20 * time.Second) {
				notReady = append(notReady, ms[i].opts.ServerName)
			}
		}
		if len(notReady) == 0 {
			break
		}
		for _, s := range servers {
			s.Shutdown()
		}
		if attempt == 3 {
			t.Fatalf("%s not listening on ports found free, three times", strings.Join(notReady, ", "))
		}
		t.Logf("%s not listening on ports found free: booting again", strings.Join(notReady, ", "))
	}
	start := time.Now()
	// Generous: once, under the race detector with the other packages'
	// tests on the same two cores, there was no leader after 30 s (it is
	// about 0.5 s alone); the members' state is logged if it happens again.
	for time.Since(start) < 90*time.Second && !slices.ContainsFunc(servers, (*server.Server).JetStreamIsLeader) {
		time.Sleep(50 * time.Millisecond)
	}
	if !slices.ContainsFunc(servers, (*server.Server).JetStreamIsLeader) {
		for i, s := range servers {
			t.Logf("%s: running %v, routes %d", ms[i].opts.ServerName, s.Running(), s.NumRoutes())
		}
		t.Fatal("no JetStream meta leader after 90 s")
	}
	t.Logf("meta leader elected after %s", time.Since(start).Round(time.Millisecond))
	for _, m := range ms {
		if err := routeSignIn(m.route, "", ""); err == nil || !strings.Contains(err.Error(), "Authorization Violation") {
			t.Errorf("%s: a route without the route password: %v, want it refused", m.opts.ServerName, err)
		}
	}
	if err := routeSignIn(ms[0].route, "route", testRoutePassword); err != nil {
		t.Errorf("%s: the route user refused: %v", ms[0].opts.ServerName, err)
	}

	var urls []string
	for _, m := range ms {
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", m.client))
	}
	if nc, err := nats.Connect(strings.Join(urls, ","), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("an anonymous client was let in")
	}
	dial := func(name string, opts ...nats.Option) (*nats.Conn, error) {
		return nats.Connect(strings.Join(urls, ","), append([]nats.Option{nats.Name(name), nats.UserInfo("toolwire", testSecrets["TOOLWIRE_NATS_PASSWORD"])}, opts...)...)
	}
	reg, err := tool.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := pipeline.Start(ctx, dial, pipeline.Config{Space: subjects.Default(), Tools: reg, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatalf("the stages on the cluster: %v", err)
	}
	defer p.Stop()

	// What KEDA's nats-jetstream trigger reads, from the same manifests.
	so := byKind(manifests(t), "ScaledObject")[0]
	md := strMap(dig(list(dig(so.m, "spec", "triggers"))[0], "metadata"))
	var leader string
	for _, m := range ms {
		u := fmt.Sprintf("http://127.0.0.1:%d/jsz?acc=%s&consumers=true&config=true", m.monitor, url.QueryEscape(md["account"]))
		var jsz struct {
			Meta struct {
				Size int `json:"cluster_size"`
			} `json:"meta_cluster"`
			Accounts []struct {
				Name    string `json:"name"`
				Streams []struct {
					Name      string `json:"name"`
					Consumers []struct {
						Name    string `json:"name"`
						Cluster struct {
							Leader string `json:"leader"`
						} `json:"cluster"`
					} `json:"consumer_detail"`
				} `json:"stream_detail"`
			} `json:"account_details"`
		}
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&jsz)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if jsz.Meta.Size != len(members) {
			t.Errorf("%s: meta cluster of %d, want %d", u, jsz.Meta.Size, len(members))
		}
		for _, a := range jsz.Accounts {
			for _, s := range a.Streams {
				for _, c := range s.Consumers {
					if a.Name == md["account"] && s.Name == md["stream"] && c.Name == md["consumer"] {
						leader = c.Cluster.Leader
					}
				}
			}
		}
	}
	if _, ok := byName[leader]; !ok {
		t.Fatalf("no member's /jsz shows consumer %s of stream %s in account %s with a leader among %v (leader %q)", md["consumer"], md["stream"], md["account"], byName, leader)
	}
}

// routeSignIn opens a route connection to port on loopback as a server
// of the cluster would, signing in as user (none: ""), and reports how
// the member answered: nil when it took the route.
func routeSignIn(port int, user, password string) error {
	conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 2*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	r := bufio.NewReader(conn)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "INFO ") {
		return fmt.Errorf("no INFO from the member: %q, %v", line, err)
	}
	connect, _ := json.Marshal(map[string]any{"verbose": false, "pedantic": false, "user": user, "pass": password,
		"name": "NROUTESIGNINPROBE", "cluster": "toolwire", "headers": true})
	if _, err := fmt.Fprintf(conn, "CONNECT %s\r\nPING\r\n", connect); err != nil {
		return err
	}
	for {
		line, err := r.ReadString('\n')
		switch {
		case err != nil:
			return fmt.Errorf("the member closed the route: %w", err)
		case strings.HasPrefix(line, "-ERR"):
			return errors.New(strings.TrimSpace(line))
		case strings.HasPrefix(line, "PONG"):
			return nil
		}
	}
}
