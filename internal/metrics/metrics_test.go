package metrics_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/toolwire/toolwire/internal/metrics"
	"github.com/toolwire/toolwire/internal/stage"
)

// TestTenantLabelBounded: past MaxTenants, tenants share one label; the
// counters and histograms follow the hooks.
func TestTenantLabelBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Hooks()
	for i := range metrics.MaxTenants + 50 {
		h.OnCall(stage.CallEvent{Stage: "executor", Tenant: fmt.Sprintf("t%d", i), Tool: "Bash", Outcome: "ok", Ran: time.Millisecond})
	}
	h.Handled(stage.Handling{Stage: "router", Tenant: "t0", Outcome: stage.DeadLettered, Delivered: 3})
	if n := testutil.CollectAndCount(reg, "toolwire_calls_total"); n != metrics.MaxTenants+1 {
		t.Errorf("%d call series, want %d (the bound and %s)", n, metrics.MaxTenants+1, metrics.OtherTenant)
	}
	want := `
# HELP toolwire_dead_letters_total Messages a stage gave up on and copied to its dead-letter subject.
# TYPE toolwire_dead_letters_total counter
toolwire_dead_letters_total{stage="router",tenant="t0"} 1
# HELP toolwire_redeliveries_total Messages a stage received again (a retry, a dead worker's call, an ack that did not arrive).
# TYPE toolwire_redeliveries_total counter
toolwire_redeliveries_total{stage="router",tenant="t0"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "toolwire_dead_letters_total", "toolwire_redeliveries_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(reg, "toolwire_call_duration_seconds"); n != 1 {
		t.Errorf("%d duration series, want 1 (by tool and outcome only)", n)
	}
}
