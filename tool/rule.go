package tool

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rule is a permission rule in the Claude Code style: "Tool" names a whole
// tool, "Tool(content)" one kind of call of it: "Bash(git status:*)",
// "Read(./secrets/**)". "mcp__server" (or "mcp__server__*") names every tool
// of that MCP server.
//
// A rule naming a whole tool removes it from the pool when it is a deny rule
// (Assemble); rules with content are checked per call (MatchesCall).
type Rule struct {
	// Tool is the tool's name, or "mcp__<server>" for a whole server.
	Tool string
	// Content is the pattern inside the parentheses; "" for the whole tool.
	// "Tool()" and "Tool(*)" are the whole tool too.
	Content string
}

// ParseRule parses "Tool" or "Tool(content)".
func ParseRule(s string) (Rule, error) {
	if strings.TrimSpace(s) == "" {
		return Rule{}, fmt.Errorf("rule %q: empty", s)
	}
	name, content, paren := strings.Cut(s, "(")
	if paren {
		if !strings.HasSuffix(content, ")") {
			return Rule{}, fmt.Errorf("rule %q: missing \")\" at the end", s)
		}
		content = strings.TrimSuffix(content, ")")
	}
	switch {
	case name == "":
		return Rule{}, fmt.Errorf("rule %q: no tool name before \"(\"", s)
	case strings.ContainsAny(name, ")"):
		return Rule{}, fmt.Errorf("rule %q: \")\" without \"(\"", s)
	case strings.IndexFunc(name, unicode.IsSpace) >= 0:
		return Rule{}, fmt.Errorf("rule %q: the tool name %q contains white space", s, name)
	}
	if content == "*" {
		content = ""
	}
	return Rule{Tool: name, Content: content}, nil
}

// ParseRules parses every rule, naming the first bad one by its index.
func ParseRules(ss []string) ([]Rule, error) {
	rules := make([]Rule, 0, len(ss))
	for i, s := range ss {
		r, err := ParseRule(s)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// String is the rule as it is written.
func (r Rule) String() string {
	if r.Content == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Content + ")"
}

// WholeTool reports whether the rule covers every call of its tool.
func (r Rule) WholeTool() bool { return r.Content == "" }

// MatchesTool reports whether the rule covers the whole tool called name,
// so that a deny rule removes it from the pool.
func (r Rule) MatchesTool(name string) bool {
	return r.WholeTool() && r.namesTool(name)
}

// MatchesCall reports whether the rule covers one call of toolName whose
// argument is arg: the command for Bash, the path (Tool.Path) for file
// tools. Content forms:
//
//   - "prefix:*": arg is prefix, or starts with prefix and white space
//     ("Bash(rm:*)" covers "rm -rf x", not "rmdir x");
//   - a glob: "*" is any run of characters but "/", "**" any run at all
//     ("Read(./secrets/**)" covers "secrets/a/b.txt" and "./secrets");
//     paths are compared cleaned, without a leading "./";
//   - anything else: arg exactly.
func (r Rule) MatchesCall(toolName, arg string) bool {
	if !r.namesTool(toolName) {
		return false
	}
	if r.WholeTool() {
		return true
	}
	if prefix, ok := strings.CutSuffix(r.Content, ":*"); ok {
		a := strings.TrimSpace(arg)
		rest, ok := strings.CutPrefix(a, prefix)
		if !ok {
			return false
		}
		next, _ := utf8.DecodeRuneInString(rest)
		return rest == "" || unicode.IsSpace(next)
	}
	if !strings.Contains(r.Content, "*") {
		return arg == r.Content || cleanPath(arg) == cleanPath(r.Content)
	}
	re, err := globRegexp(cleanPath(r.Content))
	if err != nil {
		return false
	}
	return re.MatchString(arg) || re.MatchString(cleanPath(arg))
}

// namesTool reports whether the rule's tool part names the tool called
// name: the name itself, or the MCP server the tool belongs to.
func (r Rule) namesTool(name string) bool {
	if r.Tool == name {
		return true
	}
	server := strings.TrimSuffix(r.Tool, "__*")
	if !strings.HasPrefix(server, "mcp__") || strings.Contains(server[len("mcp__"):], "__") {
		return false
	}
	return strings.HasPrefix(name, server+"__")
}

// cleanPath cleans p and drops a leading "./"; "" stays "".
func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	p = path.Clean(p)
	return strings.TrimPrefix(p, "./")
}

// globRegexp compiles a glob: "/**" at the end matches the directory and
// everything below it, "**/" any leading directories, "**" any run, "*"
// any run without "/".
func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); {
		switch {
		case strings.HasPrefix(glob[i:], "/**") && i+3 == len(glob):
			b.WriteString("(?:/.*)?")
			i += 3
		case strings.HasPrefix(glob[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 3
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i += 2
		case glob[i] == '*':
			b.WriteString("[^/]*")
			i++
		default:
			_, n := utf8.DecodeRuneInString(glob[i:])
			b.WriteString(regexp.QuoteMeta(glob[i : i+n]))
			i += n
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}
