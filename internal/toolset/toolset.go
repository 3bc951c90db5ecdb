// Package toolset assembles the tools a toolwire process hosts from its
// configuration: the built-ins, the test tools when asked, the tools of the
// configured MCP servers and ToolSearch, filtered by the deny rules and in
// the cache-stable pool order (docs/tools.md, The pool the model is offered).
package toolset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/toolwire/toolwire/internal/config"
	"github.com/toolwire/toolwire/internal/permission"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
	"github.com/toolwire/toolwire/tool/mcp"
	"github.com/toolwire/toolwire/tool/testtools"
)

// Set is an assembled set of tools and the servers behind some of them.
type Set struct {
	// Registry resolves the pool's tools by name.
	Registry *tool.Registry
	// Pool is the tools in pool order.
	Pool []*tool.Tool
	// Policy is the configured permission policy (nil: none).
	Policy *permission.Policy
	// Limits are the configured event limits, carried with the policy to
	// the stages (zero fields: the defaults).
	Limits  schemas.Limits
	servers []*mcp.Server
}

// Build connects the configured MCP servers and assembles the pool. cfg may
// be nil (no file). Close the set to stop the servers.
func Build(ctx context.Context, cfg *config.Config, testTools bool, log *slog.Logger) (*Set, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Set{}
	builtins := builtin.Tools()
	if testTools {
		builtins = append(builtins, testtools.Tools()...)
	}
	var externals []*tool.Tool
	if cfg != nil {
		s.Policy, s.Limits = cfg.Policy, cfg.Limits
		for _, sc := range cfg.MCPServers {
			srv, err := mcp.Connect(ctx, sc, log)
			if err != nil {
				s.Close()
				return nil, fmt.Errorf("toolset: MCP server %s: %w", sc.Name, err)
			}
			s.servers = append(s.servers, srv)
			externals = append(externals, srv.Tools()...)
		}
	}
	mode, err := cfg.ToolSearchMode()
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("toolset: %w", err)
	}
	var plan tool.Plan
	search := tool.NewToolSearch(func() []*tool.Tool { return plan.Deferred })
	s.Pool = tool.Assemble(append(builtins, search), externals, cfg.Rules())
	plan = tool.PlanDeferral(s.Pool, mode, tool.DefaultContextWindow)
	if s.Registry, err = tool.NewRegistry(s.Pool...); err != nil {
		s.Close()
		return nil, fmt.Errorf("toolset: %w", err)
	}
	return s, nil
}

// Close stops the MCP servers.
func (s *Set) Close() error {
	var errs []error
	for _, srv := range s.servers {
		errs = append(errs, srv.Close())
	}
	return errors.Join(errs...)
}
