package metrics

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/toolwire/toolwire/internal/provision"
	"github.com/toolwire/toolwire/subjects"
)

// scrapeWait bounds the JetStream reads of one scrape: a slow or absent
// server makes the backlog series go missing, not the scrape hang.
const scrapeWait = 2 * time.Second

// consumers reports each stage consumer's backlog from JetStream when
// scraped.
type consumers struct {
	js                         jetstream.JetStream
	space                      subjects.Space
	pending, ackPending, redel *prometheus.Desc
}

// Consumers is a collector of the stage consumers' backlog: messages not
// delivered yet (the lag KEDA scales executors on), delivered and not
// acknowledged, and redelivered, per stream and consumer.
func Consumers(js jetstream.JetStream, space subjects.Space) prometheus.Collector {
	labels := []string{"stage", "stream", "consumer"}
	return &consumers{
		js: js, space: space,
		pending:    prometheus.NewDesc("toolwire_consumer_pending_messages", "Messages of a stage consumer not delivered yet (its lag).", labels, nil),
		ackPending: prometheus.NewDesc("toolwire_consumer_ack_pending_messages", "Messages of a stage consumer delivered and not acknowledged yet.", labels, nil),
		redel:      prometheus.NewDesc("toolwire_consumer_redelivered_messages", "Messages of a stage consumer delivered more than once and not acknowledged yet.", labels, nil),
	}
}

func (c *consumers) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.ackPending
	ch <- c.redel
}

func (c *consumers) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeWait)
	defer cancel()
	// A stream that does not answer leaves its series out of this scrape.
	_ = provision.EachStageConsumer(ctx, c.js, c.space, func(stage, stream string, ci *jetstream.ConsumerInfo) {
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(ci.NumPending), stage, stream, ci.Name)
		ch <- prometheus.MustNewConstMetric(c.ackPending, prometheus.GaugeValue, float64(ci.NumAckPending), stage, stream, ci.Name)
		ch <- prometheus.MustNewConstMetric(c.redel, prometheus.GaugeValue, float64(ci.NumRedelivered), stage, stream, ci.Name)
	})
}
