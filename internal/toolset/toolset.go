// Package toolset assembles the tools a toolwire process hosts from its
// configuration: the built-ins, the test tools when asked, the tools of the
// configured MCP servers and ToolSearch, filtered by the deny rules and in
// the cache-stable pool order (docs/tools.md, The pool the model is offered),
// and planned for deferral. Every command that needs tools assembles them
// once with Build and reads what it needs from the Set.
package toolset

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/toolwire/toolwire/internal/config"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
	"github.com/toolwire/toolwire/tool/mcp"
	"github.com/toolwire/toolwire/tool/permission"
	"github.com/toolwire/toolwire/tool/testtools"
)

// Options say which tools a process hosts and how they are offered.
type Options struct {
	// Config is the configuration file's content (nil: no file).
	Config *config.Config
	// TestTools adds the test tools (Noop, Sleep, Chdir) to the built-ins;
	// they run in-process like the built-ins.
	TestTools bool
	// SearchMode, when set, is the tool search mode in place of the
	// configuration's tool_search: the binary sets it from its environment,
	// which wins over the file.
	SearchMode *tool.SearchMode
	// ContextWindow is the model's context window in tokens, which
	// tool_search auto measures the deferrable tools against (<= 0:
	// tool.DefaultContextWindow).
	ContextWindow int
	// Builtins, when not nil, replace the built-in tools and the test
	// tools: a test's own in-process tools.
	Builtins []*tool.Tool
	// Externals are external tools besides the MCP servers' (a test's
	// stand-ins for servers).
	Externals []*tool.Tool
	// Log receives the MCP servers' reports (default: discarded).
	Log *slog.Logger
}

// Set is an assembled set of tools and the servers behind some of them.
type Set struct {
	// Known is every tool the process has, deny rules aside, in pool order
	// with ToolSearch among the built-ins: what a command may inspect by
	// name even when the model is never offered it.
	Known []*tool.Tool
	// Pool is the tools the deny rules leave, in pool order, ToolSearch
	// included.
	Pool []*tool.Tool
	// Registry resolves the pool's tools by name or alias, deferred ones
	// included: what the router routes.
	Registry *tool.Registry
	// Plan splits the pool into the tools sent with every request and those
	// deferred behind ToolSearch; ToolSearch searches Plan.Deferred.
	Plan tool.Plan
	// Policy is the configured permission policy (nil: none).
	Policy *permission.Policy
	// Limits are the configured event limits, carried with the policy to
	// the stages (zero fields: the defaults).
	Limits  schemas.Limits
	servers []*mcp.Server
}

// Build connects the configured MCP servers, assembles the pool and plans
// its deferral. ctx bounds connecting the servers (an interrupt stops them
// starting). Close the set to stop the servers.
func Build(ctx context.Context, o Options) (*Set, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	cfg := o.Config
	mode := cfg.ToolSearchMode()
	if o.SearchMode != nil {
		mode = *o.SearchMode
	}
	builtins := o.Builtins
	if builtins == nil {
		builtins = builtin.ToolsWith(cfg.BashPolicy())
		if o.TestTools {
			builtins = append(builtins, testtools.Tools()...)
		}
	}
	// Clipped so that appending never writes into the caller's arrays.
	externals := o.Externals[:len(o.Externals):len(o.Externals)]
	s := &Set{}
	if cfg != nil {
		s.Policy, s.Limits = cfg.Policy, cfg.Limits
		for _, sc := range cfg.MCPServers {
			srv, err := mcp.Connect(ctx, sc, o.Log)
			if err != nil {
				s.Close()
				return nil, fmt.Errorf("toolset: MCP server %s: %w", sc.Name, err)
			}
			s.servers = append(s.servers, srv)
			externals = append(externals, srv.Tools()...)
		}
	}
	// ToolSearch searches what the plan defers; the plan is made after the
	// pool, which holds ToolSearch, so the tool reads it when called.
	search := tool.NewToolSearch(func() []*tool.Tool { return s.Plan.Deferred })
	builtins = append(builtins[:len(builtins):len(builtins)], search)
	s.Known = tool.Assemble(builtins, externals, nil)
	s.Pool = tool.Assemble(builtins, externals, cfg.Rules())
	s.Plan = tool.PlanDeferral(s.Pool, mode, o.ContextWindow)
	var err error
	if s.Registry, err = tool.NewRegistry(s.Pool...); err != nil {
		s.Close()
		return nil, fmt.Errorf("toolset: %w", err)
	}
	return s, nil
}

// Lookup finds a known tool by name, else by alias, deny rules aside.
func (s *Set) Lookup(name string) (*tool.Tool, bool) {
	for _, t := range s.Known {
		if t.Name() == name {
			return t, true
		}
	}
	for _, t := range s.Known {
		for _, a := range t.Aliases() {
			if a == name {
				return t, true
			}
		}
	}
	return nil, false
}

// KnownNames are the known tools' names, in pool order.
func (s *Set) KnownNames() []string {
	names := make([]string, len(s.Known))
	for i, t := range s.Known {
		names[i] = t.Name()
	}
	return names
}

// Searchable is what a ToolSearch query runs over: with deferredOnly the
// tools deferred under the current mode, exactly what the model's
// ToolSearch sees; else every tool of the pool but ToolSearch itself.
func (s *Set) Searchable(deferredOnly bool) []*tool.Tool {
	if deferredOnly {
		return s.Plan.Deferred
	}
	var out []*tool.Tool
	for _, t := range s.Pool {
		if t.Name() != tool.ToolSearchName {
			out = append(out, t)
		}
	}
	return out
}

// Servers are the configured MCP servers, in configuration order.
func (s *Set) Servers() []*mcp.Server { return append([]*mcp.Server(nil), s.servers...) }

// Down names the MCP servers that are not running, and why; nil when
// every one is up.
func (s *Set) Down() error {
	var errs []error
	for _, srv := range s.servers {
		errs = append(errs, srv.Down())
	}
	return errors.Join(errs...)
}

// Close stops the MCP servers.
func (s *Set) Close() error {
	var errs []error
	for _, srv := range s.servers {
		errs = append(errs, srv.Close())
	}
	return errors.Join(errs...)
}
