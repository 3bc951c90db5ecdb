package toolset_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/toolwire/toolwire/internal/config"
	"github.com/toolwire/toolwire/internal/toolset"
	"github.com/toolwire/toolwire/tool"
)

func TestBuild(t *testing.T) {
	cfg, err := config.Parse([]byte(`{"deny": ["Write"], "permissions": {"deny": ["Bash(rm:*)"]}, "limits": {"max_calls_per_turn": 7}}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := toolset.Build(context.Background(), toolset.Options{Config: cfg, TestTools: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{"Bash", "Read", "Edit", "ToolSearch", "Noop", "Sleep"} {
		if _, ok := s.Registry.Lookup(name); !ok {
			t.Errorf("%s missing", name)
		}
	}
	if _, ok := s.Registry.Lookup("Write"); ok {
		t.Error("a whole-tool deny rule left Write in the pool")
	}
	// Write is still known: tools check inspects it, the router never routes it.
	if w, ok := s.Lookup("Write"); !ok || w.Name() != "Write" || slices.Contains(s.Pool, w) {
		t.Errorf("Write known %v, in the pool %v", ok, slices.Contains(s.Pool, w))
	}
	if s.Policy == nil || len(s.Policy.Default.Deny) != 1 {
		t.Errorf("policy not carried: %+v", s.Policy)
	}
	if s.Limits.MaxCallsPerTurn != 7 {
		t.Errorf("limits not carried: %+v", s.Limits)
	}

	plain, err := toolset.Build(context.Background(), toolset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, ok := plain.Registry.Lookup("Noop"); ok {
		t.Error("test tools without asking")
	}
	if plain.Policy != nil {
		t.Error("a policy without a config")
	}
	if plain.Plan.Active() || plain.Plan.Mode.String() != "auto:10" {
		t.Errorf("built-ins alone: plan %+v", plain.Plan)
	}
}

func fakeMCP(server, name string) *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Name: "mcp__" + server + "__" + name, Description: "A " + name + ".",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Origin:      tool.Origin{Kind: tool.OriginMCP, Server: server},
		Call: func(context.Context, json.RawMessage, tool.TurnContext, tool.Progress) (tool.Result, error) {
			return tool.Result{}, nil
		},
	})
}

// TestBuildPlansDeferral: the mode given wins over the file's; the plan
// defers the MCP tools, and ToolSearch, in the pool, searches them.
func TestBuildPlansDeferral(t *testing.T) {
	cfg, err := config.Parse([]byte(`{"tool_search": "off"}`))
	if err != nil {
		t.Fatal(err)
	}
	ext := []*tool.Tool{fakeMCP("jira", "list"), fakeMCP("github", "get")}
	off, err := toolset.Build(context.Background(), toolset.Options{Config: cfg, Externals: ext})
	if err != nil {
		t.Fatal(err)
	}
	if off.Plan.Active() {
		t.Errorf("tool_search off deferred %v", off.Plan.DeferredNames())
	}
	on := tool.SearchMode{Kind: tool.SearchOn}
	s, err := toolset.Build(context.Background(), toolset.Options{Config: cfg, SearchMode: &on, Externals: ext})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Plan.DeferredNames(); !slices.Equal(got, []string{"mcp__github__get", "mcp__jira__list"}) {
		t.Errorf("deferred %v", got)
	}
	if got := s.Searchable(true); !slices.Equal(got, s.Plan.Deferred) {
		t.Errorf("searchable, deferred only: %v", got)
	}
	if got := s.Searchable(false); len(got) != len(s.Pool)-1 || slices.ContainsFunc(got, func(t *tool.Tool) bool { return t.Name() == tool.ToolSearchName }) {
		t.Errorf("searchable: %d tools of a pool of %d", len(got), len(s.Pool))
	}
	search, ok := s.Registry.Lookup(tool.ToolSearchName)
	if !ok {
		t.Fatal("no ToolSearch")
	}
	res, err := search.Call(context.Background(), json.RawMessage(`{"query":"select:mcp__jira__list"}`), tool.TurnContext{}, nil)
	if err != nil || !json.Valid([]byte(res.Content)) {
		t.Fatalf("ToolSearch: %v %q", err, res.Content)
	}
	var out tool.SearchOutput
	if err := json.Unmarshal([]byte(res.Content), &out); err != nil || !slices.Equal(out.Matches, []string{"mcp__jira__list"}) {
		t.Errorf("ToolSearch does not search the plan: %s", res.Content)
	}
	// The caller's slice is left as it was.
	if len(ext) != 2 || ext[0].Name() != "mcp__jira__list" {
		t.Errorf("externals changed: %v", ext)
	}
}
