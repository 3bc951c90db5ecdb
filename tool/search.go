package tool

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultMaxResults is how many tools a keyword search returns by default.
const DefaultMaxResults = 5

// Search weights (docs/tools.md, Deferred tools and ToolSearch), per query term.
const (
	scoreWholePart    = 10 // the term is a whole part of the name
	scoreWholePartMCP = 12 // ... of an MCP tool's name
	scorePartOf       = 5  // the term is inside a part of the name
	scorePartOfMCP    = 6  // ... of an MCP tool's name
	scoreFullName     = 3  // inside the full name, when nothing else matched
	scoreHint         = 4  // a word of the search hint
	scoreDescription  = 2  // a word of the description
)

// Match is one tool a search found. Score is its keyword score; lookups
// by name (select:, an exact name, an mcp__ prefix) score 0.
type Match struct {
	Tool  *Tool
	Score int
}

// Search finds tools of catalog for query, the way ToolSearch does:
//
//   - "select:A,B" returns the tools named A and B (exactly, else ignoring
//     case), in that order, unknown names skipped, whatever maxResults;
//   - a query equal to a tool's name (ignoring case) returns that tool alone;
//   - a query "mcp__<server>…" returns the tools whose names start with it,
//     sorted by name, up to maxResults (when none does, the query is
//     searched as keywords);
//   - otherwise the query is split on white space into lower-case terms. A
//     term "+t" is required: only tools where t is, or is inside, a part of
//     the name, or is a word of the description or the search hint, remain.
//     Every term (required or not) then scores, for each tool: 10 when it is
//     a whole part of the name (12 for an MCP tool), else 5 when it is
//     inside a part (6 for an MCP tool); plus 4 when it is a word of the
//     search hint; plus 2 when it is a word of the description ("word":
//     bounded by characters that are not letters, digits or "_"). A tool no
//     term scored anything for gets 3 for each term inside its full
//     lower-case name without the "mcp__" prefix ("readfile" in ReadFile,
//     "create_issue" in mcp__github__create_issue). Tools scoring above 0 are ranked by score,
//     then by name, and the first maxResults returned.
//
// A name's parts are its pieces between "_", "__" and "-", each split
// further at CamelCase humps (ReadMCPResource: read, mcp, resource), in
// lower case; an MCP tool (its name starts with "mcp__", or its origin is
// MCP) loses the "mcp" prefix first, so mcp__github__create_issue has the
// parts github, create, issue. maxResults <= 0 means DefaultMaxResults.
func Search(catalog []*Tool, query string, maxResults int) []Match {
	if maxResults <= 0 {
		maxResults = DefaultMaxResults
	}
	q := strings.TrimSpace(query)
	if q == "" {
		return nil
	}
	if list, ok := cutPrefixFold(q, "select:"); ok {
		return selectNames(catalog, list)
	}
	ql := strings.ToLower(q)
	for _, t := range catalog {
		if t != nil && strings.ToLower(t.Name()) == ql {
			return []Match{{Tool: t}}
		}
	}
	if strings.HasPrefix(ql, "mcp__") && len(ql) > len("mcp__") {
		var found []Match
		for _, t := range catalog {
			if t != nil && strings.HasPrefix(strings.ToLower(t.Name()), ql) {
				found = append(found, Match{Tool: t})
			}
		}
		if len(found) > 0 {
			slices.SortStableFunc(found, func(a, b Match) int { return cmp.Compare(a.Tool.Name(), b.Tool.Name()) })
			return found[:min(len(found), maxResults)]
		}
	}
	return keywordSearch(catalog, strings.Fields(ql), maxResults)
}

// selectNames looks up each comma-separated name of list.
func selectNames(catalog []*Tool, list string) []Match {
	var found []Match
	seen := map[*Tool]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		t := findName(catalog, name)
		if t == nil || seen[t] {
			continue
		}
		seen[t] = true
		found = append(found, Match{Tool: t})
	}
	return found
}

// findName finds the tool called name, exactly, else ignoring case.
func findName(catalog []*Tool, name string) *Tool {
	var fold *Tool
	for _, t := range catalog {
		switch {
		case t == nil:
		case t.Name() == name:
			return t
		case fold == nil && strings.EqualFold(t.Name(), name):
			fold = t
		}
	}
	return fold
}

// keywordSearch scores every tool of catalog for terms and ranks them.
func keywordSearch(catalog []*Tool, terms []string, maxResults int) []Match {
	var required []string
	for _, term := range terms {
		if len(term) > 1 && term[0] == '+' {
			required = append(required, term[1:])
		}
	}
	scoring := make([]string, 0, len(terms))
	for _, term := range terms {
		if len(term) > 1 && term[0] == '+' {
			term = term[1:]
		}
		scoring = append(scoring, term)
	}
	var found []Match
	for _, t := range catalog {
		if t == nil {
			continue
		}
		d := describe(t)
		if !d.hasAll(required) {
			continue
		}
		if s := d.score(scoring); s > 0 {
			found = append(found, Match{Tool: t, Score: s})
		}
	}
	slices.SortStableFunc(found, func(a, b Match) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Tool.Name(), b.Tool.Name()))
	})
	return found[:min(len(found), maxResults)]
}

// searchable is what the keyword search looks at in one tool.
type searchable struct {
	parts []string // the name's parts, lower case
	full  string   // the whole name, lower case, without "mcp__"
	mcp   bool
	hint  string // lower case
	desc  string // lower case
}

func describe(t *Tool) searchable {
	full := strings.ToLower(t.Name())
	mcp := strings.HasPrefix(full, "mcp__") || t.Origin().Kind == OriginMCP
	return searchable{
		parts: NameParts(t.Name()),
		full:  strings.TrimPrefix(full, "mcp__"),
		mcp:   mcp,
		hint:  strings.ToLower(t.SearchHint()),
		desc:  strings.ToLower(t.ModelDescription()),
	}
}

// nameMatch is scoreWholePart, scorePartOf or 0 (MCP weights for MCP tools).
func (d searchable) nameMatch(term string) int {
	if slices.Contains(d.parts, term) {
		if d.mcp {
			return scoreWholePartMCP
		}
		return scoreWholePart
	}
	for _, p := range d.parts {
		if strings.Contains(p, term) {
			if d.mcp {
				return scorePartOfMCP
			}
			return scorePartOf
		}
	}
	return 0
}

// hasAll reports whether every required term is in the name, a word of the
// description or a word of the hint.
func (d searchable) hasAll(required []string) bool {
	for _, term := range required {
		if d.nameMatch(term) == 0 && !containsWord(d.desc, term) && !containsWord(d.hint, term) {
			return false
		}
	}
	return true
}

func (d searchable) score(terms []string) int {
	s := 0
	for _, term := range terms {
		s += d.nameMatch(term)
		if containsWord(d.hint, term) {
			s += scoreHint
		}
		if containsWord(d.desc, term) {
			s += scoreDescription
		}
	}
	if s == 0 {
		for _, term := range terms {
			if strings.Contains(d.full, term) {
				s += scoreFullName
			}
		}
	}
	return s
}

// containsWord reports whether term occurs in text at word boundaries: not
// preceded or followed by a word character where the term itself begins or
// ends with one (like \bterm\b).
func containsWord(text, term string) bool {
	if term == "" || text == "" {
		return false
	}
	first, _ := utf8.DecodeRuneInString(term)
	last, _ := utf8.DecodeLastRuneInString(term)
	for from := 0; ; {
		i := strings.Index(text[from:], term)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(term)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		okStart := start == 0 || !isWordRune(first) || !isWordRune(before)
		okEnd := end == len(text) || !isWordRune(last) || !isWordRune(after)
		if okStart && okEnd {
			return true
		}
		_, n := utf8.DecodeRuneInString(text[start:])
		from = start + n
	}
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// NameParts splits a tool name into its lower-case parts, as Search sees
// them: an "mcp__" prefix dropped, then split on "_", "__" and "-", then at
// CamelCase humps. "mcp__github__create_issue" → github, create, issue;
// "ReadMCPResource" → read, mcp, resource.
func NameParts(name string) []string {
	if len(name) >= len("mcp__") && strings.EqualFold(name[:len("mcp__")], "mcp__") {
		name = name[len("mcp__"):]
	}
	var parts []string
	for _, chunk := range strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' }) {
		for _, p := range splitCamel(chunk) {
			parts = append(parts, strings.ToLower(p))
		}
	}
	return parts
}

// splitCamel splits s before an upper-case letter that follows a lower-case
// letter or a digit, and before the last upper-case letter of a run that is
// followed by a lower-case letter (HTTPRequest: HTTP, Request).
func splitCamel(s string) []string {
	rs := []rune(s)
	var out []string
	start := 0
	for i := 1; i < len(rs); i++ {
		prev, cur := rs[i-1], rs[i]
		hump := unicode.IsUpper(cur) && (unicode.IsLower(prev) || unicode.IsDigit(prev))
		acronymEnd := unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(rs) && unicode.IsLower(rs[i+1])
		if hump || acronymEnd {
			out = append(out, string(rs[start:i]))
			start = i
		}
	}
	return append(out, string(rs[start:]))
}

// cutPrefixFold is strings.CutPrefix ignoring the prefix's case.
func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
