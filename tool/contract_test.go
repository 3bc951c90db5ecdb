package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// The defaults of every group for a tool defined with only a name, a schema
// and a call: enabled, built-in, not deferred; unsafe and writing; allowed;
// presented by its name.
func TestDefaultsOfEveryGroup(t *testing.T) {
	tl := tool.MustBuild(tool.Definition{Name: "T", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`), Call: call})
	in := json.RawMessage(`{"command":"ls -la"}`)

	// identity and discovery
	if !tl.IsEnabled() || tl.Deferred() || tl.AlwaysLoad() || tl.ShouldDefer() || tl.SearchHint() != "" {
		t.Error("discovery defaults: want enabled, not deferred")
	}
	if o := tl.Origin(); o.Kind != tool.OriginBuiltin || o.Server != "" || o.External() || o.String() != "builtin" {
		t.Errorf("origin = %+v", o)
	}
	// model contract
	if tl.Prompt() != "" || tl.ModelDescription() != "d" || tl.OutputSchema() != nil || tl.Strict() {
		t.Error("model contract defaults")
	}
	// execution
	if err := tl.ValidateInput(context.Background(), in, tool.TurnContext{}); err != nil {
		t.Errorf("ValidateInput = %v", err)
	}
	// safety: unsafe, writing, not destructive, not open-world, no error
	s := tl.Safety(in)
	if s.ConcurrencySafe || s.ReadOnly || s.Destructive || s.OpenWorld || s.Err != nil || tl.IsOpenWorld(in) {
		t.Errorf("safety defaults = %+v", s)
	}
	if tl.InterruptBehavior() != tool.InterruptBlock || tl.CancelsSiblings() {
		t.Error("interrupt defaults")
	}
	// permissions: allowed, no path
	if d := tl.CheckPermission(in, tool.PermissionContext{Mode: tool.ModeDefault}); d.Behavior != tool.Allow || d.UpdatedInput != nil {
		t.Errorf("permission = %+v", d)
	}
	if tl.Path(in) != "" {
		t.Error("path default")
	}
	// result shaping
	r := tool.Result{Content: "x"}
	if tl.MapOutput(r) != r || tl.EmptyText() != "(T completed with no output)" || tl.MaxResultChars() != tool.DefaultMaxResultChars {
		t.Error("result shaping defaults")
	}
	// presentation
	if tl.UserFacingName() != "T" || tl.Activity(in) != "T(ls -la)" || tl.Summary(in) != "T(ls -la)" {
		t.Errorf("presentation: %q %q %q", tl.UserFacingName(), tl.Activity(in), tl.Summary(in))
	}
}

func TestActivityDefault(t *testing.T) {
	long := strings.Repeat("é", 45)
	for in, want := range map[string]string{
		`{}`:                                 "Bash",
		`not json`:                           "Bash",
		`{"file_path":"a.go","pattern":"x"}`: "Bash(a.go)",
		`{"pattern":"*.go"}`:                 "Bash(*.go)",
		`{"command":"` + long + `"}`:         "Bash(" + strings.Repeat("é", 40) + "…)",
	} {
		if got := tool.DefaultActivity("Bash", json.RawMessage(in)); got != want {
			t.Errorf("DefaultActivity(%s) = %q, want %q", in, got, want)
		}
	}
}

// Every func a definition supplies fails closed when it panics or errors.
func TestFailingFuncsFailClosed(t *testing.T) {
	boom := func(json.RawMessage) (bool, error) { panic("boom") }
	cannot := func(json.RawMessage) (bool, error) { return true, errors.New("cannot tell") }
	tl := tool.MustBuild(tool.Definition{
		Name: "T", Call: call,
		ConcurrencySafe: boom, ReadOnly: cannot, Destructive: boom, OpenWorld: cannot,
		Enabled:       func() bool { panic("boom") },
		ValidateInput: func(context.Context, json.RawMessage, tool.TurnContext) error { panic("boom") },
		Permission:    func(json.RawMessage, tool.PermissionContext) tool.Decision { panic("boom") },
		Path:          func(json.RawMessage) string { panic("boom") },
		MapOutput:     func(tool.Result) tool.Result { panic("boom") },
		Activity:      func(json.RawMessage) string { panic("boom") },
		Summary:       func(json.RawMessage) string { panic("boom") },
	})
	in := json.RawMessage(`{"command":"ls"}`)
	s := tl.Safety(in)
	if s.ConcurrencySafe || s.ReadOnly || s.Destructive || s.OpenWorld {
		t.Errorf("failed predicates counted as true: %+v", s)
	}
	want := "concurrency_safe: predicate panicked: boom; read_only: cannot tell; destructive: predicate panicked: boom; open_world: cannot tell"
	if s.Err == nil || s.Err.Error() != want {
		t.Errorf("Safety.Err = %v\nwant %s", s.Err, want)
	}
	if tl.IsEnabled() {
		t.Error("panicking Enabled counted as enabled")
	}
	if err := tl.ValidateInput(context.Background(), in, tool.TurnContext{}); err == nil {
		t.Error("panicking ValidateInput accepted the input")
	}
	if d := tl.CheckPermission(in, tool.PermissionContext{}); d.Behavior != tool.Deny || !strings.Contains(d.Reason, "boom") {
		t.Errorf("panicking permission check = %+v", d)
	}
	if tl.Path(in) != "" {
		t.Error("panicking Path gave a path")
	}
	if r := tl.MapOutput(tool.Result{Content: "secret"}); !r.IsError || strings.Contains(r.Content, "secret") {
		t.Errorf("panicking MapOutput = %+v", r)
	}
	if tl.Activity(in) != "T(ls)" || tl.Summary(in) != "T(ls)" {
		t.Errorf("panicking presentation: %q %q", tl.Activity(in), tl.Summary(in))
	}
}

func TestDefinitionMembers(t *testing.T) {
	tl := tool.MustBuild(tool.Definition{
		Name: "Fetch", Call: call, Description: "short", Prompt: "long text",
		SearchHint: "  download \n a  web page ", AlwaysLoad: true, Deferred: true,
		Origin:       tool.Origin{Kind: tool.OriginRemote, Server: "gpu"},
		OutputSchema: json.RawMessage(`{"type":"string"}`), Strict: true,
		OpenWorld:      tool.Always,
		UserFacingName: "Web fetch",
		EmptyText:      "nothing fetched",
		Permission: func(in json.RawMessage, pc tool.PermissionContext) tool.Decision {
			if pc.Mode == tool.ModePlan {
				return tool.Asked("fetch in plan mode?")
			}
			return tool.Decision{Behavior: tool.Allow, UpdatedInput: json.RawMessage(`{"url":"https://x"}`)}
		},
		Path:      func(json.RawMessage) string { return "cache/x" },
		MapOutput: func(r tool.Result) tool.Result { r.Content = strings.ToUpper(r.Content); return r },
		Summary:   func(json.RawMessage) string { return "fetching" },
	})
	if tl.SearchHint() != "download a web page" || tl.ModelDescription() != "long text" || tl.Description() != "short" {
		t.Error("hint or description")
	}
	if tl.ShouldDefer() || tl.Origin().String() != "remote:gpu" || !tl.Origin().External() || !tl.Strict() {
		t.Error("always-load, origin or strict")
	}
	if !tl.IsOpenWorld(nil) || tl.UserFacingName() != "Web fetch" || tl.EmptyText() != "nothing fetched" {
		t.Error("open world, user-facing name or empty text")
	}
	if tl.Activity(json.RawMessage(`{}`)) != "Web fetch" || tl.Summary(nil) != "fetching" || tl.Path(nil) != "cache/x" {
		t.Error("activity, summary or path")
	}
	if d := tl.CheckPermission(nil, tool.PermissionContext{Mode: tool.ModePlan}); d.Behavior != tool.Ask || d.Behavior.String() != "ask" {
		t.Errorf("permission in plan mode = %+v", d)
	}
	if d := tl.CheckPermission(nil, tool.PermissionContext{}); string(d.UpdatedInput) != `{"url":"https://x"}` {
		t.Errorf("updated input = %s", d.UpdatedInput)
	}
	if r := tl.MapOutput(tool.Result{Content: "abc"}); r.Content != "ABC" {
		t.Errorf("MapOutput = %+v", r)
	}
	mcp := tool.MustBuild(tool.Definition{Name: "mcp__s__t", Call: call, Origin: tool.Origin{Kind: tool.OriginMCP, Server: "s"}})
	marked := tool.MustBuild(tool.Definition{Name: "Big", Call: call, Deferred: true})
	if !mcp.ShouldDefer() || !marked.ShouldDefer() {
		t.Error("MCP tools and built-ins marked deferred must defer")
	}
	off := tool.MustBuild(tool.Definition{Name: "Off", Call: call, Enabled: func() bool { return false }})
	if off.IsEnabled() {
		t.Error("Enabled false ignored")
	}
}

func TestBuildRejectsBadMembers(t *testing.T) {
	for name, d := range map[string]tool.Definition{
		"output schema":    {Name: "T", Call: call, OutputSchema: json.RawMessage(`{`)},
		"mcp, no server":   {Name: "T", Call: call, Origin: tool.Origin{Kind: tool.OriginMCP}},
		"remote no server": {Name: "T", Call: call, Origin: tool.Origin{Kind: tool.OriginRemote}},
		"unknown origin":   {Name: "T", Call: call, Origin: tool.Origin{Kind: 7, Server: "s"}},
	} {
		if _, err := tool.Build(d); !errors.Is(err, tool.ErrInvalidDefinition) {
			t.Errorf("%s: Build = %v", name, err)
		}
	}
}
