package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/embedded"
)

// clusterFlags make serve's embedded server a member of a NATS cluster.
type clusterFlags struct {
	name, listen, routes, serverName, domain string
	replicas                                 int
	logs                                     bool
}

func (c *clusterFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&c.name, "cluster", "", "join the embedded server to the NATS cluster of this name (with --routes)")
	f.StringVar(&c.listen, "cluster-listen", "127.0.0.1:6222", "address where the embedded server takes routes from the cluster's other members")
	f.StringVar(&c.routes, "routes", "", "cluster URLs of the other members, comma-separated (nats://host:6222,...)")
	f.StringVar(&c.serverName, "server-name", "", "the embedded server's name, unique in its cluster (default: from --listen)")
	f.StringVar(&c.domain, "domain", "", "JetStream domain of the embedded server")
	f.IntVar(&c.replicas, "replicas", 0, "replicas of every stream and bucket (default 3 on a cluster, 1 alone)")
	f.BoolVar(&c.logs, "nats-logs", false, "log what the embedded NATS server does (stderr)")
}

// options fills the cluster part of the embedded server's options.
func (c *clusterFlags) options(o *embedded.Options) error {
	if c.replicas < 0 || c.replicas > 5 {
		return fmt.Errorf("serve: --replicas %d: JetStream keeps 1 to 5 replicas", c.replicas)
	}
	o.Domain, o.Logs = c.domain, c.logs
	o.Name = c.serverName
	if c.name == "" {
		if c.routes != "" {
			return fmt.Errorf("serve: --routes needs --cluster NAME")
		}
		return nil
	}
	if o.Name == "" {
		o.Name = "toolwire-" + strings.NewReplacer(":", "-", ".", "-").Replace(o.Listen)
	}
	o.Cluster = &embedded.Cluster{Name: c.name, Listen: c.listen}
	for _, r := range strings.Split(c.routes, ",") {
		if r = strings.TrimSpace(r); r != "" {
			o.Cluster.Routes = append(o.Cluster.Routes, r)
		}
	}
	return nil
}

// reconnect is how every connection of serve rides out a broker restart or
// a cluster member's death: forever, a quarter second apart plus up to a
// second of jitter so that many processes do not return at once, and over
// a buffer that holds what is published meanwhile. The subscriptions, and
// with them the stages' consumers, come back by themselves. A process
// started before its server listens waits for it the same way (and its
// start, for JetStream, up to two minutes: pipeline.Start).
func reconnect() []nats.Option {
	return []nats.Option{
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectJitter(time.Second, time.Second),
	}
}
