// Package permission decides whether a call may run: the allow, deny and
// ask rules of docs/tools.md (Permissions), per tenant, then the tool's own check.
//
// A deny rule wins over an ask rule, which wins over an allow rule. For
// Bash every simple command of the command line is checked on its own, so
// "Bash(rm:*)" denies "ls && rm -rf build" too; an allow rule allows a
// command line only when it covers every command in it.
package permission

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolwire/toolwire/internal/texts"
	"github.com/toolwire/toolwire/tool"
	"mvdan.cc/sh/v3/syntax"
)

// Rules are one set of allow, deny and ask rules.
type Rules struct {
	Allow []tool.Rule
	Deny  []tool.Rule
	Ask   []tool.Rule
}

// Policy holds the rules for every tenant: Default applies to all, a
// tenant's own rules are added to it.
type Policy struct {
	Default Rules
	Tenants map[string]Rules
}

// ParseRules parses written rules, naming the list and index of a bad one.
func ParseRules(allow, deny, ask []string) (Rules, error) {
	var r Rules
	var err error
	if r.Allow, err = tool.ParseRules(allow); err != nil {
		return Rules{}, fmt.Errorf("allow%w", err)
	}
	if r.Deny, err = tool.ParseRules(deny); err != nil {
		return Rules{}, fmt.Errorf("deny%w", err)
	}
	if r.Ask, err = tool.ParseRules(ask); err != nil {
		return Rules{}, fmt.Errorf("ask%w", err)
	}
	return r, nil
}

// rulesFor is the default rules plus the tenant's.
func (p *Policy) rulesFor(tenant string) Rules {
	r := p.Default
	if t, ok := p.Tenants[tenant]; ok {
		r.Allow = append(append([]tool.Rule(nil), r.Allow...), t.Allow...)
		r.Deny = append(append([]tool.Rule(nil), r.Deny...), t.Deny...)
		r.Ask = append(append([]tool.Rule(nil), r.Ask...), t.Ask...)
	}
	return r
}

// Check decides one call. A nil policy leaves it to the tool.
func (p *Policy) Check(tenant string, t *tool.Tool, input json.RawMessage, pc tool.PermissionContext) tool.Decision {
	if p != nil {
		rules := p.rulesFor(tenant)
		args := arguments(t, input)
		if r, arg, ok := firstMatch(rules.Deny, t.Name(), args); ok {
			return tool.Denied(texts.RuleDenied(t.Name(), r.String(), arg))
		}
		if r, arg, ok := firstMatch(rules.Ask, t.Name(), args); ok {
			return tool.Asked(fmt.Sprintf("the rule %s asks about %q", r, arg))
		}
		if len(rules.Allow) > 0 && allCovered(rules.Allow, t.Name(), args) {
			return tool.Allowed()
		}
	}
	return t.CheckPermission(input, pc)
}

// arguments are what rules are matched against: the path a call touches,
// each simple command of a Bash command line, or the call's main argument.
func arguments(t *tool.Tool, input json.RawMessage) []string {
	if p := t.Path(input); p != "" {
		return []string{p}
	}
	arg := tool.MainArgument(input)
	if t.Name() == "Bash" {
		if cmds, err := commands(arg); err == nil && len(cmds) > 0 {
			return cmds
		}
	}
	return []string{arg}
}

// commands splits a shell command line into its simple commands, as
// written (the words of each command, joined by single spaces).
func commands(line string) ([]string, error) {
	f, err := syntax.NewParser().Parse(strings.NewReader(line), "")
	if err != nil {
		return nil, err
	}
	var out []string
	printer := syntax.NewPrinter()
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		words := make([]string, 0, len(call.Args))
		for _, w := range call.Args {
			var b strings.Builder
			if err := printer.Print(&b, w); err != nil {
				return true
			}
			words = append(words, b.String())
		}
		out = append(out, strings.Join(words, " "))
		return true
	})
	return out, nil
}

func firstMatch(rules []tool.Rule, name string, args []string) (tool.Rule, string, bool) {
	for _, a := range args {
		for _, r := range rules {
			if r.MatchesCall(name, a) {
				return r, a, true
			}
		}
	}
	return tool.Rule{}, "", false
}

func allCovered(rules []tool.Rule, name string, args []string) bool {
	for _, a := range args {
		if _, _, ok := firstMatch(rules, name, []string{a}); !ok {
			return false
		}
	}
	return true
}
