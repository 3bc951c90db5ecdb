package tool

import (
	"fmt"
	"strconv"
	"strings"
)

// Deferral defaults (docs/tools.md, Deferred tools and ToolSearch).
const (
	// DefaultAutoPercent is auto's threshold: defer when the deferrable
	// tools' definitions exceed this share of the context window.
	DefaultAutoPercent = 10
	// DefaultContextWindow is the context window, in tokens, auto assumes
	// when it is told none.
	DefaultContextWindow = 200_000
	// CharsPerToken is how many characters of a definition auto counts as a
	// token.
	CharsPerToken = 2.5
)

// SearchModeKind is when tools are deferred.
type SearchModeKind int

const (
	// SearchAuto defers only when the deferrable tools' definitions exceed
	// a share of the context window (the default).
	SearchAuto SearchModeKind = iota
	// SearchOn always defers the deferrable tools.
	SearchOn
	// SearchOff never defers: every tool is sent, and ToolSearch is not.
	SearchOff
)

// SearchMode is when tools are deferred, as the configuration's tool_search
// and the toolwire binary's TOOLWIRE_TOOL_SEARCH write it: "on", "off",
// "auto" or "auto:N". The zero value is auto at DefaultAutoPercent.
type SearchMode struct {
	Kind SearchModeKind
	// Percent is auto's threshold, 1–100; 0 means DefaultAutoPercent.
	Percent int
}

// percent is auto's effective threshold.
func (m SearchMode) percent() int {
	if m.Percent <= 0 {
		return DefaultAutoPercent
	}
	return m.Percent
}

// String is the mode as ParseSearchMode reads it: "on", "off", "auto:N".
func (m SearchMode) String() string {
	switch m.Kind {
	case SearchOn:
		return "on"
	case SearchOff:
		return "off"
	}
	return "auto:" + strconv.Itoa(m.percent())
}

// ParseSearchMode reads "on", "off", "auto" or "auto:N" (N a whole
// percentage from 1 to 100), ignoring case and surrounding white space.
func ParseSearchMode(s string) (SearchMode, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "on":
		return SearchMode{Kind: SearchOn}, nil
	case "off":
		return SearchMode{Kind: SearchOff}, nil
	case "auto":
		return SearchMode{Kind: SearchAuto, Percent: DefaultAutoPercent}, nil
	}
	if n, ok := strings.CutPrefix(v, "auto:"); ok {
		p, err := strconv.Atoi(n)
		if err == nil && p >= 1 && p <= 100 {
			return SearchMode{Kind: SearchAuto, Percent: p}, nil
		}
	}
	return SearchMode{}, fmt.Errorf("invalid tool search mode %q: want on, off, auto or auto:N with N a whole percentage from 1 to 100", s)
}

// ShouldDefer reports whether the tool is deferred when deferral is in
// effect: never when it is always-load; MCP tools by default; other tools
// when marked Deferred.
func (t *Tool) ShouldDefer() bool {
	if t.def.AlwaysLoad {
		return false
	}
	return t.def.Origin.Kind == OriginMCP || t.def.Deferred
}

// Plan is the pool split into the tools sent with every request and those
// deferred behind ToolSearch.
type Plan struct {
	Mode SearchMode
	// Loaded are sent in full, in pool order. ToolSearch is among them
	// exactly when some tool is deferred.
	Loaded []*Tool
	// Deferred are listed by name only until ToolSearch finds them, in pool
	// order.
	Deferred []*Tool
}

// PlanDeferral splits pool (from Assemble) by mode. contextTokens is the
// model's context window (<= 0: DefaultContextWindow). Nothing is deferred
// when the mode is off, when no tool would defer, under auto when the
// deferrable tools' definitions (rendered for Anthropic, CharsPerToken
// characters a token) are at most the mode's percentage of the window, or
// when the pool has no ToolSearch tool to find them with. Without deferral,
// the ToolSearch tool is left out.
func PlanDeferral(pool []*Tool, mode SearchMode, contextTokens int) Plan {
	if contextTokens <= 0 {
		contextTokens = DefaultContextWindow
	}
	p := Plan{Mode: mode}
	var (
		deferrable []*Tool
		hasSearch  bool
		chars      int
	)
	for _, t := range pool {
		switch {
		case t.Name() == ToolSearchName:
			hasSearch = true
		case t.ShouldDefer():
			deferrable = append(deferrable, t)
			if b, err := RenderOne(FormatAnthropic, Entry{Tool: t}); err == nil {
				chars += len(b)
			}
		}
	}
	active := hasSearch && len(deferrable) > 0
	switch mode.Kind {
	case SearchOff:
		active = false
	case SearchAuto:
		// chars/CharsPerToken > percent/100 × window, in whole numbers
		active = active && int64(chars)*100*10 > int64(mode.percent())*int64(contextTokens)*int64(CharsPerToken*10)
	}
	for _, t := range pool {
		switch {
		case t.Name() == ToolSearchName:
			if active {
				p.Loaded = append(p.Loaded, t)
			}
		case active && t.ShouldDefer():
			p.Deferred = append(p.Deferred, t)
		default:
			p.Loaded = append(p.Loaded, t)
		}
	}
	return p
}

// Active reports whether any tool is deferred.
func (p Plan) Active() bool { return len(p.Deferred) > 0 }

// DeferredNames are the deferred tools' names, in pool order.
func (p Plan) DeferredNames() []string {
	names := make([]string, len(p.Deferred))
	for i, t := range p.Deferred {
		names[i] = t.Name()
	}
	return names
}

// Entries is what a request lists: the loaded tools, then the deferred
// tools named in discovered (found through ToolSearch earlier in the
// conversation) with DeferLoading set, both in pool order — so finding a
// tool only ever appends to the list.
func (p Plan) Entries(discovered []string) []Entry {
	out := Entries(p.Loaded)
	found := make(map[string]bool, len(discovered))
	for _, n := range discovered {
		found[n] = true
	}
	for _, t := range p.Deferred {
		if found[t.Name()] {
			out = append(out, Entry{Tool: t, DeferLoading: true})
		}
	}
	return out
}

// DeferredToolsPrompt is the system prompt's list of deferred tool names,
// one a line inside <available-deferred-tools>; "" when there are none.
func DeferredToolsPrompt(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "<available-deferred-tools>\n" + strings.Join(names, "\n") + "\n</available-deferred-tools>\n"
}
