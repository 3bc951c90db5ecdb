package main

import (
	"context"
	"fmt"

	"github.com/toolwire/toolwire/internal/health"
	"github.com/toolwire/toolwire/internal/metrics"
	"github.com/toolwire/toolwire/internal/toolset"
	"github.com/toolwire/toolwire/pipeline"
)

// watchStages has /readyz check that the pipeline's stages (its executor
// workers among them) still run and that every MCP server is up, naming
// what is not, and serves the MCP servers' state on /metrics.
func watchStages(hs *health.Server, p *pipeline.Pipeline, set *toolset.Set) error {
	hs.ReadyWhen(func(context.Context) error { return p.Alive() })
	hs.ReadyWhen(func(context.Context) error { return set.Down() })
	if err := hs.Registerer().Register(metrics.MCPServers(set.Servers())); err != nil {
		return fmt.Errorf("serve: metrics: %w", err)
	}
	return nil
}
