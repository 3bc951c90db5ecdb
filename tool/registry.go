package tool

import (
	"errors"
	"fmt"
	"sort"
)

// Registry resolves names and aliases to tools. It is safe for concurrent
// reads once built; Add is not meant to race with Lookup.
type Registry struct {
	byName map[string]*Tool
	tools  []*Tool
}

// ErrDuplicateTool is returned by Add when a name or alias is taken.
var ErrDuplicateTool = errors.New("tool: duplicate name")

// NewRegistry returns a registry holding the given tools.
func NewRegistry(tools ...*Tool) (*Registry, error) {
	r := &Registry{byName: map[string]*Tool{}}
	for _, t := range tools {
		if err := r.Add(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add registers t under its name and aliases.
func (r *Registry) Add(t *Tool) error {
	names := append([]string{t.Name()}, t.Aliases()...)
	for _, n := range names {
		if _, ok := r.byName[n]; ok {
			return fmt.Errorf("%w: %s", ErrDuplicateTool, n)
		}
	}
	for _, n := range names {
		r.byName[n] = t
	}
	r.tools = append(r.tools, t)
	sort.Slice(r.tools, func(i, j int) bool { return r.tools[i].Name() < r.tools[j].Name() })
	return nil
}

// Lookup finds a tool by name or alias.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Tools lists the registered tools sorted by name.
func (r *Registry) Tools() []*Tool { return append([]*Tool(nil), r.tools...) }
