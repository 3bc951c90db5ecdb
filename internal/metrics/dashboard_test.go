package metrics_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/toolwire/toolwire/internal/metrics"
	"github.com/toolwire/toolwire/subjects"
)

// TestDashboardQueriesExportedMetrics: every toolwire metric the Grafana
// dashboard in deploy/ queries is one a toolwire process exports, so a
// renamed metric cannot leave a panel silently empty.
func TestDashboardQueriesExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("../../deploy/grafana/toolwire.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	exported := map[string]bool{
		// Served by internal/health beside these.
		"toolwire_stage_messages_out_total": true, "toolwire_stage_messages_in_total": true,
		"toolwire_stage_reconnects_total": true, "toolwire_router_late_calls_total": true,
	}
	// Every collector's description counts: vectors with no series yet
	// are not gathered.
	var collectors []prometheus.Collector
	if _, err := metrics.New(registerer{&collectors}); err != nil {
		t.Fatal(err)
	}
	collectors = append(collectors, metrics.Consumers(nil, subjects.Default()), metrics.MCPServers(nil))
	fq := regexp.MustCompile(`fqName: "([a-z0-9_]+)"`)
	for _, c := range collectors {
		descs := make(chan *prometheus.Desc, 16)
		c.Describe(descs)
		close(descs)
		for d := range descs {
			exported[fq.FindStringSubmatch(d.String())[1]] = true
		}
	}
	name := regexp.MustCompile(`toolwire_[a-z0-9_]+`)
	queried := 0
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				queried++
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_count"), "_sum")
				if !exported[base] {
					t.Errorf("panel %q queries %s, which toolwire does not export", p.Title, m)
				}
			}
		}
	}
	if queried < 8 {
		t.Errorf("the dashboard queries only %d toolwire metrics", queried)
	}
}

// registerer keeps what is registered on it.
type registerer struct{ collectors *[]prometheus.Collector }

func (r registerer) Register(c prometheus.Collector) error {
	*r.collectors = append(*r.collectors, c)
	return nil
}

func (r registerer) MustRegister(cs ...prometheus.Collector) {
	*r.collectors = append(*r.collectors, cs...)
}

func (r registerer) Unregister(prometheus.Collector) bool { return false }
