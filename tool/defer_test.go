package tool_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

func TestParseSearchMode(t *testing.T) {
	for s, want := range map[string]tool.SearchMode{
		"on":       {Kind: tool.SearchOn},
		" OFF ":    {Kind: tool.SearchOff},
		"auto":     {Kind: tool.SearchAuto, Percent: 10},
		"auto:25":  {Kind: tool.SearchAuto, Percent: 25},
		"Auto:1":   {Kind: tool.SearchAuto, Percent: 1},
		"auto:100": {Kind: tool.SearchAuto, Percent: 100},
	} {
		got, err := tool.ParseSearchMode(s)
		if err != nil || got != want {
			t.Errorf("ParseSearchMode(%q) = %+v, %v; want %+v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "yes", "true", "auto:", "auto:0", "auto:101", "auto:-5", "auto:10%", "auto:1.5", "auto10"} {
		if _, err := tool.ParseSearchMode(s); err == nil || !strings.Contains(err.Error(), "want on, off, auto or auto:N") {
			t.Errorf("ParseSearchMode(%q) = %v", s, err)
		}
	}
	for m, want := range map[tool.SearchMode]string{{}: "auto:10", {Kind: tool.SearchOn}: "on", {Kind: tool.SearchOff}: "off", {Percent: 7}: "auto:7"} {
		if m.String() != want {
			t.Errorf("%+v.String() = %q", m, m.String())
		}
	}
}

// deferPool is two built-ins (one marked deferred, one not), ToolSearch, an
// always-load MCP tool and MCP tools with descriptions of size chars each.
func deferPool(chars int, mcpTools int) []*tool.Tool {
	bs := []*tool.Tool{builtinT("Read"), tool.MustBuild(tool.Definition{Name: "NotebookEdit", Deferred: true, Call: call})}
	var ext []*tool.Tool
	for i := range mcpTools {
		ext = append(ext, mcpT("big", string(rune('a'+i)), strings.Repeat("x", chars)))
	}
	ext = append(ext, tool.MustBuild(tool.Definition{Name: "mcp__big__pinned", Call: call, AlwaysLoad: true,
		Origin: tool.Origin{Kind: tool.OriginMCP, Server: "big"}}))
	var plan tool.Plan
	bs = append(bs, tool.NewToolSearch(func() []*tool.Tool { return plan.Deferred }))
	return tool.Assemble(bs, ext, nil)
}

func TestPlanDeferral(t *testing.T) {
	pool := deferPool(100, 3)
	on := tool.PlanDeferral(pool, tool.SearchMode{Kind: tool.SearchOn}, 0)
	if got := poolNames(on.Loaded); !slices.Equal(got, []string{"Read", "ToolSearch", "mcp__big__pinned"}) {
		t.Errorf("on: loaded %v", got)
	}
	if got := on.DeferredNames(); !slices.Equal(got, []string{"NotebookEdit", "mcp__big__a", "mcp__big__b", "mcp__big__c"}) {
		t.Errorf("on: deferred %v", got)
	}
	if !on.Active() {
		t.Error("on: not active")
	}
	off := tool.PlanDeferral(pool, tool.SearchMode{Kind: tool.SearchOff}, 0)
	if got := poolNames(off.Loaded); !slices.Equal(got, []string{"NotebookEdit", "Read", "mcp__big__a", "mcp__big__b", "mcp__big__c", "mcp__big__pinned"}) || off.Active() {
		t.Errorf("off: loaded %v, deferred %v (ToolSearch must go)", got, off.DeferredNames())
	}

	// auto: the deferrable definitions, rendered for Anthropic, against N%
	// of the window at 2.5 characters a token.
	var chars int
	for _, tl := range on.Deferred {
		b, _ := tool.RenderOne(tool.FormatAnthropic, tool.Entry{Tool: tl})
		chars += len(b)
	}
	// chars/2.5 tokens is exactly 10% of a window of 4×chars tokens: not
	// above it. One token less and it is.
	if tool.PlanDeferral(pool, tool.SearchMode{}, 4*chars).Active() {
		t.Errorf("auto: deferred at exactly 10%% (%d chars, window %d)", chars, 4*chars)
	}
	if !tool.PlanDeferral(pool, tool.SearchMode{}, 4*chars-1).Active() {
		t.Errorf("auto: not deferred above 10%% (%d chars, window %d)", chars, 4*chars-1)
	}
	// 50%: the threshold window is 0.8×chars.
	half := tool.SearchMode{Kind: tool.SearchAuto, Percent: 50}
	if !tool.PlanDeferral(pool, half, chars*8/10-1).Active() || tool.PlanDeferral(pool, half, chars*8/10+1).Active() {
		t.Error("auto:50 threshold")
	}
	// The default window: 200,000 tokens; 10% is 50,000 characters.
	if tool.PlanDeferral(deferPool(1000, 3), tool.SearchMode{}, 0).Active() {
		t.Error("auto: ~3 KB of tools deferred in a 200k window")
	}
	if !tool.PlanDeferral(deferPool(20_000, 3), tool.SearchMode{}, 0).Active() {
		t.Error("auto: ~60 KB of tools not deferred in a 200k window")
	}

	// Without a ToolSearch tool nothing can be found, so nothing defers.
	noSearch := slices.DeleteFunc(slices.Clone(pool), func(t *tool.Tool) bool { return t.Name() == tool.ToolSearchName })
	if tool.PlanDeferral(noSearch, tool.SearchMode{Kind: tool.SearchOn}, 0).Active() {
		t.Error("deferred without ToolSearch")
	}
}

// Found tools are appended with defer_loading, in pool order; the prompt
// lists the deferred names.
func TestPlanEntriesAndPrompt(t *testing.T) {
	plan := tool.PlanDeferral(deferPool(10, 3), tool.SearchMode{Kind: tool.SearchOn}, 0)
	entries := plan.Entries([]string{"mcp__big__c", "nope", "NotebookEdit"})
	var got []string
	for _, e := range entries {
		s := e.Tool.Name()
		if e.DeferLoading {
			s += "*"
		}
		got = append(got, s)
	}
	if want := []string{"Read", "ToolSearch", "mcp__big__pinned", "NotebookEdit*", "mcp__big__c*"}; !slices.Equal(got, want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	b, _ := tool.Render(tool.FormatAnthropic, entries)
	if n := strings.Count(string(b), `"defer_loading": true`); n != 2 {
		t.Errorf("%d defer_loading marks", n)
	}
	want := "<available-deferred-tools>\nNotebookEdit\nmcp__big__a\nmcp__big__b\nmcp__big__c\n</available-deferred-tools>\n"
	if p := tool.DeferredToolsPrompt(plan.DeferredNames()); p != want {
		t.Errorf("prompt %q", p)
	}
	if tool.DeferredToolsPrompt(nil) != "" {
		t.Error("prompt without deferred tools")
	}
}

// The ToolSearch tool: safe, read-only, never deferred, searching the
// catalog it is given at each call and returning full definitions.
func TestToolSearchTool(t *testing.T) {
	catalog := loadCatalog(t)
	ts := tool.NewToolSearch(func() []*tool.Tool { return catalog })
	in := json.RawMessage(`{"query":"+jira issue","max_results":2}`)
	if !ts.IsConcurrencySafe(in) || !ts.IsReadOnly(in) || ts.ShouldDefer() || !ts.AlwaysLoad() || ts.Name() != tool.ToolSearchName {
		t.Error("ToolSearch must be safe, read-only and always loaded")
	}
	if ts.Activity(in) != "ToolSearch(+jira issue)" {
		t.Errorf("activity %q", ts.Activity(in))
	}
	res, err := ts.Call(context.Background(), in, tool.TurnContext{}, nil)
	if err != nil || res.IsError {
		t.Fatal(res, err)
	}
	var out tool.SearchOutput
	if err := json.Unmarshal([]byte(res.Content), &out); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Matches, []string{"mcp__jira__create_issue", "mcp__jira__get_issue"}) || out.TotalTools != len(catalog) || len(out.Tools) != 2 {
		t.Errorf("output %+v", out)
	}
	var def struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(out.Tools[1], &def); err != nil || def.Name != "mcp__jira__get_issue" || def.Description != "Get a Jira issue by key." || string(def.InputSchema) != `{"type":"object"}` {
		t.Errorf("definition %s: %v", out.Tools[1], err)
	}
	// no matches: empty lists, not null
	res, _ = ts.Call(context.Background(), json.RawMessage(`{"query":"zzzz"}`), tool.TurnContext{}, nil)
	if !strings.Contains(res.Content, `"matches":[]`) || !strings.Contains(res.Content, `"tools":[]`) {
		t.Errorf("no matches: %s", res.Content)
	}
	for _, bad := range []string{`{"query":"  "}`, `{"query":5}`} {
		if res, _ := ts.Call(context.Background(), json.RawMessage(bad), tool.TurnContext{}, nil); !res.IsError {
			t.Errorf("%s: not an error result", bad)
		}
	}
	if res, _ := tool.NewToolSearch(nil).Call(context.Background(), json.RawMessage(`{"query":"x"}`), tool.TurnContext{}, nil); res.IsError {
		t.Error("nil catalog")
	}
}
