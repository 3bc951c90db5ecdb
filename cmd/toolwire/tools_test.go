package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/toolset"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
)

func noCall(context.Context, json.RawMessage, tool.TurnContext, tool.Progress) (tool.Result, error) {
	return tool.Result{}, nil
}

func fakeMCP(server, name, desc string) *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Name: "mcp__" + server + "__" + name, Description: desc,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
		Origin:      tool.Origin{Kind: tool.OriginMCP, Server: server},
		Call:        noCall,
	})
}

// fixedTools is a source of exactly these tools, in this order.
func fixedTools(builtins, externals []*tool.Tool) toolSource {
	return func(o *toolset.Options) {
		o.Builtins, o.Externals = slices.Clone(builtins), slices.Clone(externals)
	}
}

// runTools runs the tools command on src and returns stdout and the exit status.
func runTools(t *testing.T, src toolSource, args ...string) (string, int, error) {
	t.Helper()
	return runSub(t, func() *cobra.Command { return newToolsWith(src) }, "", args...)
}

// mustRunTools is runTools for calls that must succeed.
func mustRunTools(t *testing.T, src toolSource, args ...string) string {
	t.Helper()
	out, code, err := runTools(t, src, args...)
	if code != 0 {
		t.Fatalf("tools %v: exit %d: %v", args, code, err)
	}
	return out
}

func renderedNames(t *testing.T, out string, format tool.Format) []string {
	t.Helper()
	var items []struct {
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal([]byte(out), &items); err != nil {
		t.Fatalf("output is not a JSON array: %v\n%s", err, out)
	}
	var names []string
	for _, it := range items {
		if format == tool.FormatOpenAI {
			names = append(names, it.Function.Name)
		} else {
			names = append(names, it.Name)
		}
	}
	return names
}

// The default command renders the built-ins sorted by name; with only
// built-ins nothing is deferred, so ToolSearch is not sent.
func TestToolsListsBuiltins(t *testing.T) {
	t.Setenv(envToolSearch, "")
	var want []string
	deferred := false
	for _, tl := range builtin.Tools() {
		if tl.ShouldDefer() {
			deferred = true
			continue
		}
		want = append(want, tl.Name())
	}
	sort.Strings(want)
	if deferred {
		t.Skip("a built-in is marked deferred; the list depends on the threshold")
	}
	for _, f := range []tool.Format{tool.FormatAnthropic, tool.FormatOpenAI} {
		out, code, err := runSub(t, newTools, "", "--format", string(f))
		if code != 0 {
			t.Fatal(err)
		}
		if got := renderedNames(t, out, f); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", f, got, want)
		}
	}
	out, _, _ := runSub(t, newTools, "", "--test-tools")
	if got := renderedNames(t, out, tool.FormatAnthropic); !slices.Contains(got, "Noop") || !slices.IsSorted(got) {
		t.Errorf("--test-tools: %v", got)
	}
}

// The built-ins and two MCP servers, registered in every order, print the
// same bytes in both formats, deferred or not.
func TestToolsByteIdenticalAcrossRegistrationOrders(t *testing.T) {
	github := []*tool.Tool{fakeMCP("github", "list_issues", "List issues."), fakeMCP("github", "create_issue", "Create an issue.")}
	slack := []*tool.Tool{fakeMCP("slack", "send_message", "Send a message."), fakeMCP("slack", "add_reaction", "React with <emoji>.")}
	for _, mode := range []string{"off", "on"} {
		t.Setenv(envToolSearch, mode)
		for _, args := range [][]string{{"--format", "anthropic"}, {"--format", "openai"}, {"--prompt"}} {
			var first string
			n := 0
			for _, order := range [][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}} {
				for _, reverse := range []bool{false, true} {
					var bs, ext []*tool.Tool
					for _, src := range order {
						switch src {
						case 0:
							bs = builtin.Tools()
							if reverse {
								slices.Reverse(bs)
							}
						case 1, 2:
							group := slices.Clone([][]*tool.Tool{github, slack}[src-1])
							if reverse {
								slices.Reverse(group)
							}
							ext = append(ext, group...)
						}
					}
					out := mustRunTools(t, fixedTools(bs, ext), args...)
					if n == 0 {
						first = out
					} else if out != first {
						t.Fatalf("mode %s, %v, order %v reverse %v:\n%s\nvs\n%s", mode, args, order, reverse, out, first)
					}
					n++
				}
			}
			switch {
			case args[0] == "--prompt" && mode == "on":
				want := "<available-deferred-tools>\nmcp__github__create_issue\nmcp__github__list_issues\nmcp__slack__add_reaction\nmcp__slack__send_message\n</available-deferred-tools>\n"
				if first != want {
					t.Errorf("prompt:\n%s", first)
				}
			case args[0] == "--prompt":
				if first != "" {
					t.Errorf("prompt without deferral: %q", first)
				}
			default:
				names := renderedNames(t, first, tool.Format(args[1]))
				last := names[len(names)-1]
				if mode == "off" && last != "mcp__slack__send_message" || mode == "on" && (slices.ContainsFunc(names, func(s string) bool { return strings.HasPrefix(s, "mcp__") }) || !slices.Contains(names, "ToolSearch")) {
					t.Errorf("mode %s: %v", mode, names)
				}
				if strings.Contains(first, `\u003c`) {
					t.Error("HTML-escaped output")
				}
			}
		}
	}
}

func TestToolsCheck(t *testing.T) {
	t.Setenv(envToolSearch, "")
	out, code, err := runSub(t, newTools, "", "check", "Bash", `{"command":"ls"}`)
	if code != 0 {
		t.Fatal(err)
	}
	if want := `{"tool":"Bash","concurrency_safe":true,"read_only":true,"destructive":false,"error":null}` + "\n"; out != want {
		t.Errorf("check Bash ls:\n got %s want %s", out, want)
	}
	out, _, _ = runSub(t, newTools, "", "check", "Bash", `{"command":"rm -rf build"}`)
	var res checkOutput
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.ConcurrencySafe || res.ReadOnly || res.Error != nil {
		t.Errorf("check Bash rm: %s", out)
	}
	// A predicate that cannot read the input counts as unsafe, and says why.
	out, _, _ = runSub(t, newTools, "", "check", "Bash", `{"command":5}`)
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.ConcurrencySafe || res.Error == nil || !strings.HasPrefix(*res.Error, "concurrency_safe: ") {
		t.Errorf("check Bash 5: %s", out)
	}
	// ToolSearch is known to check even when nothing is deferred.
	if out := mustRunTools(t, defaultTools, "check", "ToolSearch", `{"query":"x"}`); !strings.Contains(out, `"concurrency_safe":true,"read_only":true`) {
		t.Errorf("check ToolSearch: %s", out)
	}
	// A panicking predicate.
	boom := tool.MustBuild(tool.Definition{Name: "Boom", Aliases: []string{"B"}, Call: noCall, ReadOnly: func(json.RawMessage) (bool, error) { panic("no") }})
	out = mustRunTools(t, fixedTools([]*tool.Tool{boom}, nil), "check", "B", `{}`)
	if want := `{"tool":"Boom","concurrency_safe":false,"read_only":false,"destructive":false,"error":"read_only: predicate panicked: no"}` + "\n"; out != want {
		t.Errorf("check by alias, panicking predicate:\n got %s want %s", out, want)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "Bsh", `{}`}, `unknown tool "Bsh" (the tools are: Bash,`},
		{[]string{"check", "Bash", `{"command":`}, "INPUT_JSON is not valid JSON"},
		{[]string{"check", "Bash", `["ls"]`}, "INPUT_JSON must be a JSON object"},
		{[]string{"check", "Bash"}, "want NAME and INPUT_JSON, got 1 argument(s)"},
		{[]string{"check", "--nope", "Bash", "{}"}, "unknown flag: --nope"},
	} {
		out, code, err := runSub(t, newTools, "", c.args...)
		if code != exitUsage || out != "" || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("tools %q: exit %d, stdout %q, err %v; want exit 2 and %q", c.args, code, out, err, c.want)
		}
	}
}

func TestToolsSearch(t *testing.T) {
	t.Setenv(envToolSearch, "")
	ext := []*tool.Tool{
		fakeMCP("jira", "create_issue", "Create a Jira issue."),
		fakeMCP("jira", "list_projects", "List projects."),
		fakeMCP("github", "create_issue", "Create an issue."),
	}
	src := fixedTools(builtin.Tools(), ext)
	out := mustRunTools(t, src, "search", "+jira issue")
	var res tool.SearchOutput
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// create_issue: jira 12+2, issue 12+2 = 28; list_projects: jira 12.
	if !slices.Equal(res.Matches, []string{"mcp__jira__create_issue", "mcp__jira__list_projects"}) || len(res.Tools) != 2 || res.Query != "+jira issue" {
		t.Errorf("search: %s", out)
	}
	if out := mustRunTools(t, src, "search", "--scores", "issue"); out != "14 mcp__github__create_issue\n14 mcp__jira__create_issue\n" {
		t.Errorf("--scores: %q", out)
	}
	if out := mustRunTools(t, src, "search", "--scores", "--max-results", "1", "mcp__jira"); out != "0 mcp__jira__create_issue\n" {
		t.Errorf("prefix: %q", out)
	}
	// --deferred searches what the model's ToolSearch sees: nothing is
	// deferred under auto with three small tools.
	if out := mustRunTools(t, src, "search", "--deferred", "issue"); !strings.Contains(out, `"matches":[],`) || !strings.Contains(out, `"total_tools":0`) {
		t.Errorf("--deferred, auto: %s", out)
	}
	t.Setenv(envToolSearch, "on")
	if out := mustRunTools(t, src, "search", "--deferred", "--scores", "issue"); out != "14 mcp__github__create_issue\n14 mcp__jira__create_issue\n" {
		t.Errorf("--deferred, on: %q", out)
	}
	for _, args := range [][]string{{"search"}, {"search", "a", "b"}, {"search", "--max-results", "-1", "x"}} {
		if _, code, _ := runTools(t, src, args...); code != exitUsage {
			t.Errorf("tools %q: exit %d, want 2", args, code)
		}
	}
}

func TestToolsConfig(t *testing.T) {
	t.Setenv(envToolSearch, "")
	ext := []*tool.Tool{fakeMCP("slack", "send_message", "Send."), fakeMCP("github", "get_issue", "Get.")}
	src := fixedTools(builtin.Tools(), ext)
	cfg := writeTemp(t, "toolwire.json", `{"deny": ["Bash", "mcp__slack", "Read(./secrets/**)"], "tool_search": "off"}`)
	names := renderedNames(t, mustRunTools(t, src, "--config", cfg), tool.FormatAnthropic)
	if slices.Contains(names, "Bash") || slices.Contains(names, "mcp__slack__send_message") || !slices.Contains(names, "Read") || names[len(names)-1] != "mcp__github__get_issue" {
		t.Errorf("deny rules not applied: %v", names)
	}
	// tool_search "on" in the file defers the MCP tools; the environment wins over it.
	on := writeTemp(t, "on.json", `{"tool_search": "on"}`)
	names = renderedNames(t, mustRunTools(t, src, "--config", on), tool.FormatAnthropic)
	if !slices.Contains(names, "ToolSearch") || slices.Contains(names, "mcp__github__get_issue") {
		t.Errorf("tool_search on: %v", names)
	}
	t.Setenv(envToolSearch, "off")
	names = renderedNames(t, mustRunTools(t, src, "--config", on), tool.FormatAnthropic)
	if slices.Contains(names, "ToolSearch") || !slices.Contains(names, "mcp__github__get_issue") {
		t.Errorf("TOOLWIRE_TOOL_SEARCH=off over the file: %v", names)
	}

	bad := writeTemp(t, "bad.json", "{\n  \"deny\": [\"Bash(rm\"]\n}")
	out, code, err := runTools(t, src, "--config", bad)
	if code != 1 || out != "" || err == nil || !strings.Contains(err.Error(), bad+`:2:12: field "deny"[0]: rule "Bash(rm": missing ")"`) {
		t.Errorf("bad config: exit %d, %v", code, err)
	}
	t.Setenv(envToolSearch, "sometimes")
	if _, code, err := runTools(t, src); code != 1 || err == nil || !strings.Contains(err.Error(), "TOOLWIRE_TOOL_SEARCH") {
		t.Errorf("bad TOOLWIRE_TOOL_SEARCH: exit %d, %v", code, err)
	}
	t.Setenv(envToolSearch, "")
	var ee *exitError
	if _, _, err := runTools(t, src, "--format", "gemini"); !errors.As(err, &ee) || ee.code != exitUsage {
		t.Errorf("bad --format: %v", err)
	}
	if _, code, _ := runTools(t, src, "stray"); code == 0 {
		t.Error("stray argument accepted")
	}
}

// TestToolsConfigMCPServer: the configuration's MCP servers add their tools
// after the built-ins.
func TestToolsConfigMCPServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs an MCP server")
	}
	dir := t.TempDir()
	bin := sharedTestServer(t)
	cfg := filepath.Join(dir, "toolwire.json")
	if err := os.WriteFile(cfg, []byte(`{"tool_search": "off", "mcp_servers": [{"name": "tsrv", "command": "`+bin+`"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "tools", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	read, lookup := strings.Index(out, `"name": "Read"`), strings.Index(out, `"name": "mcp__tsrv__lookup"`)
	if read < 0 || lookup < 0 || lookup < read {
		t.Fatalf("the MCP tools are missing or not after the built-ins:\n%.2000s", out)
	}
}
