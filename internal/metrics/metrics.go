// Package metrics turns the stages' hooks into Prometheus metrics:
// deliveries and calls by stage, tenant, tool and outcome, calls started,
// parked and their waits, lease conflicts, run times, dead letters,
// redeliveries; and, read at scrape time, each stage consumer's backlog
// from JetStream and the MCP servers' state.
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
	started      *prometheus.CounterVec
	leaseWait    *prometheus.HistogramVec
	parked       *prometheus.GaugeVec
	conflicts    *prometheus.CounterVec

	mu      sync.Mutex
	tenants map[string]bool
}

// New registers the metrics on reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolwire_calls_total",
			Help: "Calls settled by a stage: routed or rejected (router), ok, error, cancelled, rejected or handed_back (executor), delivered (reorder).",
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
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolwire_calls_started_total",
			Help: "Calls an executor claimed to run (after their wait for the turn's start rule, if any).",
		}, []string{"tenant", "tool"}),
		leaseWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolwire_lease_wait_seconds",
			Help:    "How long calls that had to wait for their turn's start rule (the lease) waited before they started, from receipt to claim.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), // 1 ms to 262 s
		}, []string{"tool"}),
		parked: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toolwire_parked_calls",
			Help: "Calls the executors hold now, waiting for their turn's start rule to let them run.",
		}, []string{"tenant"}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolwire_lease_conflicts_total",
			Help: "Writes of a turn's lease that another writer's write refused (compare-and-set conflicts, then tried again), by the stage that made them.",
		}, []string{"stage"}),
		tenants: map[string]bool{},
	}
	for _, c := range []prometheus.Collector{m.calls, m.duration, m.e2e, m.deliveries, m.handling, m.deadLetters, m.redeliveries,
		m.started, m.leaseWait, m.parked, m.conflicts} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Hooks are the stage hooks that feed m.
func (m *Metrics) Hooks() stage.Hooks {
	return stage.Hooks{Handled: m.handled, Call: m.call, Started: m.callStarted, Parked: m.callParked, LeaseConflict: m.leaseConflict}
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

func (m *Metrics) callStarted(e stage.CallEvent) {
	m.started.WithLabelValues(m.tenant(e.Tenant), e.Tool).Inc()
	if e.Waited > 0 {
		m.leaseWait.WithLabelValues(e.Tool).Observe(e.Waited.Seconds())
	}
}

// callParked follows the parked calls; a tenant keeps its label for the
// life of the process, so a call leaves the series it joined.
func (m *Metrics) callParked(tenant string, delta int) {
	m.parked.WithLabelValues(m.tenant(tenant)).Add(float64(delta))
}

func (m *Metrics) leaseConflict(stage string) { m.conflicts.WithLabelValues(stage).Inc() }

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
