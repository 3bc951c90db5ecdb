package permission

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

func bashLike(name string) *tool.Tool {
	return tool.MustBuild(tool.Definition{Name: name, Call: func(context.Context, json.RawMessage, tool.TurnContext, tool.Progress) (tool.Result, error) {
		return tool.Result{}, nil
	}})
}

func mustRules(t *testing.T, allow, deny, ask []string) Rules {
	t.Helper()
	r, err := ParseRules(allow, deny, ask)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCheck(t *testing.T) {
	bash := bashLike("Bash")
	p := &Policy{
		Default: mustRules(t, []string{"Bash(git status:*)", "Bash(ls:*)"}, []string{"Bash(rm:*)"}, []string{"Bash(git push:*)"}),
		Tenants: map[string]Rules{"acme": mustRules(t, nil, []string{"Bash(curl:*)"}, nil)},
	}
	cases := []struct {
		tenant, command string
		want            tool.Behavior
	}{
		{"default", "rm -rf build", tool.Deny},
		{"default", "ls && rm -rf build", tool.Deny},    // every command is checked
		{"default", "echo $(rm -rf x)", tool.Deny},      // substitutions too
		{"default", "git push origin main", tool.Ask},   // ask
		{"default", "git status && git push", tool.Ask}, // ask beats allow
		{"default", "rm x; git push", tool.Deny},        // deny beats ask
		{"default", "git status", tool.Allow},           // allowed by rule
		{"default", "rmdir x", tool.Allow},              // rm:* is not rmdir
		{"default", "curl example.com", tool.Allow},     // other tenants' rules do not apply
		{"acme", "curl example.com", tool.Deny},         // the tenant's own rule
		{"acme", "rm -rf build", tool.Deny},             // plus the default ones
	}
	for _, c := range cases {
		in, _ := json.Marshal(map[string]string{"command": c.command})
		d := p.Check(c.tenant, bash, in, tool.PermissionContext{})
		if d.Behavior != c.want {
			t.Errorf("%s %q: %v (%s), want %v", c.tenant, c.command, d.Behavior, d.Reason, c.want)
		}
		if d.Behavior == tool.Deny && !strings.Contains(d.Reason, "rule") {
			t.Errorf("%q: denial does not name the rule: %q", c.command, d.Reason)
		}
	}
}

func TestNilPolicyLeavesItToTheTool(t *testing.T) {
	var p *Policy
	denyAll := tool.MustBuild(tool.Definition{Name: "T", Call: func(context.Context, json.RawMessage, tool.TurnContext, tool.Progress) (tool.Result, error) {
		return tool.Result{}, nil
	}, Permission: func(json.RawMessage, tool.PermissionContext) tool.Decision { return tool.Denied("never") }})
	if d := p.Check("default", denyAll, json.RawMessage(`{}`), tool.PermissionContext{}); d.Behavior != tool.Deny {
		t.Errorf("tool's own check ignored: %v", d)
	}
	if d := p.Check("default", bashLike("Bash"), json.RawMessage(`{"command":"rm -rf /"}`), tool.PermissionContext{}); d.Behavior != tool.Allow {
		t.Errorf("nil policy: %v", d)
	}
}

func TestParseRulesNamesTheBadOne(t *testing.T) {
	if _, err := ParseRules(nil, []string{"Bash(rm:*)", "Bash(oops"}, nil); err == nil || !strings.Contains(err.Error(), "deny[1]") {
		t.Errorf("err = %v", err)
	}
}
