package tool_test

import (
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

func TestParseRule(t *testing.T) {
	for s, want := range map[string]tool.Rule{
		"Write":              {Tool: "Write"},
		"Bash()":             {Tool: "Bash"},
		"Bash(*)":            {Tool: "Bash"},
		"Bash(rm:*)":         {Tool: "Bash", Content: "rm:*"},
		"Bash(git status:*)": {Tool: "Bash", Content: "git status:*"},
		"Read(./secrets/**)": {Tool: "Read", Content: "./secrets/**"},
		"Bash(echo (a))":     {Tool: "Bash", Content: "echo (a)"},
		"mcp__github":        {Tool: "mcp__github"},
	} {
		got, err := tool.ParseRule(s)
		if err != nil || got != want {
			t.Errorf("ParseRule(%q) = %+v, %v; want %+v", s, got, err, want)
		}
	}
	for s, why := range map[string]string{
		"":          "empty",
		"  ":        "empty",
		"Bash(rm:*": `missing ")"`,
		"(rm)":      "no tool name",
		"Bash)":     `")" without "("`,
		"My Tool":   "white space",
		"Bash(x) y": `missing ")"`,
	} {
		if _, err := tool.ParseRule(s); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseRule(%q) = %v, want an error saying %q", s, err, why)
		}
	}
	if _, err := tool.ParseRules([]string{"Write", "Bash("}); err == nil || !strings.HasPrefix(err.Error(), "[1]: ") {
		t.Errorf("ParseRules names the bad index: %v", err)
	}
	if r, _ := tool.ParseRule("Bash(rm:*)"); r.String() != "Bash(rm:*)" {
		t.Errorf("String = %q", r.String())
	}
}

func TestRuleMatches(t *testing.T) {
	type call struct {
		tool, arg string
		want      bool
	}
	for rule, calls := range map[string][]call{
		"Bash": {{"Bash", "anything", true}, {"Read", "x", false}},
		"Bash(rm:*)": {
			{"Bash", "rm -rf build", true}, {"Bash", "rm", true}, {"Bash", "  rm\tx", true},
			{"Bash", "rmdir x", false}, {"Bash", "echo rm", false}, {"Read", "rm x", false},
		},
		"Bash(git status:*)": {{"Bash", "git status --short", true}, {"Bash", "git statusx", false}, {"Bash", "git log", false}},
		"Bash(npm test)":     {{"Bash", "npm test", true}, {"Bash", "npm test --watch", false}},
		"Read(./secrets/**)": {
			{"Read", "secrets/a/b.txt", true}, {"Read", "./secrets/key", true}, {"Read", "secrets", true},
			{"Read", "./secrets", true}, {"Read", "secretsx/a", false}, {"Read", "src/secrets/a", false},
		},
		"Read(**/*.pem)":  {{"Read", "a/b/c.pem", true}, {"Read", "c.pem", true}, {"Read", "c.pem.txt", false}},
		"Read(src/*.go)":  {{"Read", "src/a.go", true}, {"Read", "src/x/a.go", false}, {"Read", "./src/a.go", true}},
		"Read(/etc/**)":   {{"Read", "/etc/passwd", true}, {"Read", "etc/passwd", false}},
		"Read(a+b(1).md)": {{"Read", "a+b(1).md", true}, {"Read", "aab(1).md", false}},
		"mcp__github": {
			{"mcp__github__create_issue", "", true}, {"mcp__githubx__a", "", false}, {"mcp__github", "", true},
		},
		"mcp__github__*": {{"mcp__github__create_issue", "", true}, {"mcp__gitlab__x", "", false}},
	} {
		r, err := tool.ParseRule(rule)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			if got := r.MatchesCall(c.tool, c.arg); got != c.want {
				t.Errorf("%s.MatchesCall(%q, %q) = %v", rule, c.tool, c.arg, got)
			}
		}
	}
	whole, _ := tool.ParseRule("Write")
	partial, _ := tool.ParseRule("Bash(rm:*)")
	server, _ := tool.ParseRule("mcp__slack")
	if !whole.MatchesTool("Write") || whole.MatchesTool("Read") || partial.MatchesTool("Bash") || !server.MatchesTool("mcp__slack__send_message") {
		t.Error("MatchesTool: a whole-tool rule names its tool (or server); a pattern rule names none")
	}
}
