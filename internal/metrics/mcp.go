package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/toolwire/toolwire/tool/mcp"
)

// mcpServers reports the MCP servers' supervision when scraped.
type mcpServers struct {
	servers      []*mcp.Server
	up, restarts *prometheus.Desc
}

// MCPServers is a collector of the supervised MCP servers' state: whether
// each is up (a live session) and how many times it was restarted after
// its process or session died.
func MCPServers(servers []*mcp.Server) prometheus.Collector {
	labels := []string{"server"}
	return &mcpServers{
		servers:  servers,
		up:       prometheus.NewDesc("toolwire_mcp_server_up", "1 while an MCP server has a live session, 0 while it is down (restarting).", labels, nil),
		restarts: prometheus.NewDesc("toolwire_mcp_restarts_total", "Restarts of an MCP server that brought it back after its process or session died.", labels, nil),
	}
}

func (c *mcpServers) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.up
	ch <- c.restarts
}

func (c *mcpServers) Collect(ch chan<- prometheus.Metric) {
	for _, s := range c.servers {
		up := 0.0
		if s.Running() {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, s.Name())
		ch <- prometheus.MustNewConstMetric(c.restarts, prometheus.CounterValue, float64(s.Restarts()), s.Name())
	}
}
