package tool

import (
	"bytes"
	"cmp"
	"slices"
)

// Assemble builds the tool pool the model is offered (docs/tools.md, The pool
// the model is offered):
//
//  1. the built-in tools, without the disabled ones and those a deny rule
//     names as a whole, sorted by name;
//  2. the external tools (MCP servers, remote pools), filtered the same way,
//     sorted by name;
//  3. the second list appended to the first, not merged: adding an MCP
//     server never moves a built-in tool, and the built-in block stays one
//     cacheable prefix;
//  4. duplicates by name removed, the first kept: a built-in tool wins over
//     an external tool of the same name.
//
// The result depends only on the set of tools, not on the order of either
// slice: tools of the same name within one group are ordered by origin and
// definition before the first is kept.
func Assemble(builtins, externals []*Tool, deny []Rule) []*Tool {
	pool := make([]*Tool, 0, len(builtins)+len(externals))
	seen := make(map[string]bool, cap(pool))
	for _, group := range [][]*Tool{builtins, externals} {
		for _, t := range sortedGroup(group, deny) {
			if seen[t.Name()] {
				continue
			}
			seen[t.Name()] = true
			pool = append(pool, t)
		}
	}
	return pool
}

// DeniedWhole reports whether a rule in deny names t as a whole, by its name or
// one of its aliases.
func DeniedWhole(t *Tool, deny []Rule) bool {
	for _, r := range deny {
		if r.MatchesTool(t.Name()) {
			return true
		}
		for _, a := range t.Aliases() {
			if r.MatchesTool(a) {
				return true
			}
		}
	}
	return false
}

// sortedGroup is the enabled, not denied tools of group sorted by name,
// ties broken by everything that is rendered so the order is total.
func sortedGroup(group []*Tool, deny []Rule) []*Tool {
	out := make([]*Tool, 0, len(group))
	for _, t := range group {
		if t == nil || !t.IsEnabled() || DeniedWhole(t, deny) {
			continue
		}
		out = append(out, t)
	}
	slices.SortStableFunc(out, compareTools)
	return out
}

func compareTools(a, b *Tool) int {
	return cmp.Or(
		cmp.Compare(a.Name(), b.Name()),
		cmp.Compare(a.Origin().Kind, b.Origin().Kind),
		cmp.Compare(a.Origin().Server, b.Origin().Server),
		cmp.Compare(a.ModelDescription(), b.ModelDescription()),
		bytes.Compare(a.InputSchema(), b.InputSchema()),
		cmp.Compare(a.SearchHint(), b.SearchHint()),
	)
}
