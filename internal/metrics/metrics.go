// Package metrics turns the stages' hooks into Prometheus metrics:
// deliveries and calls by stage, tenant, tool and outcome, run times, dead
// letters, redeliveries, and each stage consumer's backlog read from
// JetStream at scrape time.
package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/toolwire/toolwire/internal/stage"
)

// MaxTenants bounds the tenant label: the first MaxTenants tenants a process
// sees keep their name, the rest are counted as OtherTenant, so that a
// platform with many tenants cannot blow up the series count.
const MaxTenants = 100

// OtherTenant is the tenant label past MaxTenants.
const OtherTenant = "_other"

// Metrics holds the collectors; Hooks feeds them.
type Metrics struct {
	calls        *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	e2e          *prometheus.HistogramVec
	deliveries   *prometheus.CounterVec
	handling     *prometheus.HistogramVec
	deadLetters  *prometheus.CounterVec
	redeliveries *prometheus.CounterVec

	mu      sync.Mutex
	tenants map[string]bool
}

// New registers the metrics on reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolwire_calls_total",
			Help: "Calls settled by a stage: routed or rejected (router), ok, error or handed_back (executor), delivered (reorder).",
		}, []string{"stage", "tenant", "tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolwire_call_duration_seconds",
			Help:    "How long calls ran in their tool, by tool and outcome.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), // 1 ms to 262 s
		}, []string{"tool", "outcome"}),
		e2e: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolwire_e2e_latency_seconds",
			Help:    "From a call's tool_use being published to its result being delivered in call order, for calls that ran.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 11), // 0.5 ms to 524 s
		}, []string{"tenant"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolwire_deliveries_total",
			Help: "Messages a stage handled, by what became of them: acked, retried, dead_lettered, left.",
		}, []string{"stage", "tenant", "outcome"}),
		handling: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolwire_handling_duration_seconds",
			Help:    "How long a stage took over one message, from receipt to its outcome.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10), // 100 µs to 26 s
		}, []string{"stage"}),
		deadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolwire_dead_letters_total",
			Help: "Messages a stage gave up on and copied to its dead-letter subject.",
		}, []string{"stage", "tenant"}),
		redeliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolwire_redeliveries_total",
			Help: "Messages a stage received again (a retry, a dead worker's call, an ack that did not arrive).",
		}, []string{"stage", "tenant"}),
		tenants: map[string]bool{},
	}
	for _, c := range []prometheus.Collector{m.calls, m.duration, m.e2e, m.deliveries, m.handling, m.deadLetters, m.redeliveries} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Hooks are the stage hooks that feed m.
func (m *Metrics) Hooks() stage.Hooks {
	return stage.Hooks{Handled: m.handled, Call: m.call}
}

func (m *Metrics) handled(h stage.Handling) {
	tenant := m.tenant(h.Tenant)
	m.deliveries.WithLabelValues(h.Stage, tenant, h.Outcome.String()).Inc()
	m.handling.WithLabelValues(h.Stage).Observe(h.Took.Seconds())
	if h.Outcome == stage.DeadLettered {
		m.deadLetters.WithLabelValues(h.Stage, tenant).Inc()
	}
	if h.Delivered > 1 {
		m.redeliveries.WithLabelValues(h.Stage, tenant).Inc()
	}
}

func (m *Metrics) call(e stage.CallEvent) {
	m.calls.WithLabelValues(e.Stage, m.tenant(e.Tenant), e.Tool, e.Outcome).Inc()
	if e.Stage == "executor" && e.Outcome != "handed_back" {
		m.duration.WithLabelValues(e.Tool, e.Outcome).Observe(e.Ran.Seconds())
	}
	if e.E2E > 0 {
		m.e2e.WithLabelValues(m.tenant(e.Tenant)).Observe(e.E2E.Seconds())
	}
}

// tenant is the label of tenant: its name while there is room.
func (m *Metrics) tenant(tenant string) string {
	if tenant == "" {
		return "" // a message whose subject named none
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tenants[tenant] {
		return tenant
	}
	if len(m.tenants) >= MaxTenants {
		return OtherTenant
	}
	m.tenants[tenant] = true
	return tenant
}
