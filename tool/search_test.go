package tool_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// catalogEntry is one tool of testdata/catalog.json.
type catalogEntry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	SearchHint  string `json:"search_hint"`
	Origin      string `json:"origin"`
	Server      string `json:"server"`
	Deferred    bool   `json:"deferred"`
}

// loadCatalog builds the 109 tools of testdata/catalog.json: 97 MCP tools
// of 20 servers and 12 built-ins marked deferred.
func loadCatalog(t *testing.T) []*tool.Tool {
	t.Helper()
	data, err := os.ReadFile("testdata/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	var entries []catalogEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		t.Fatal(err)
	}
	var tools []*tool.Tool
	for _, e := range entries {
		def := tool.Definition{Name: e.Name, Description: e.Description, SearchHint: e.SearchHint, Deferred: e.Deferred, Call: call}
		if e.Origin == "mcp" {
			def.Origin = tool.Origin{Kind: tool.OriginMCP, Server: e.Server}
		}
		tools = append(tools, tool.MustBuild(def))
	}
	if len(tools) < 100 {
		t.Fatalf("catalog has %d tools, want 100 or more", len(tools))
	}
	return tools
}

// The expected rankings below were worked out by hand from the weights of
// docs/tools.md (Deferred tools and ToolSearch), per term: whole name part 10
// (MCP 12), inside a name part 5 (MCP 6), search-hint word 4, description
// word 2; 3 per term inside the full name only for a tool nothing else
// matched. Ties go by name (byte order: upper case before "mcp__"). "P" is a
// name part, "p" inside a part, "h" the hint, "d" the description; gh =
// mcp__github__, and so on.
var searchCases = []struct {
	query string
	max   int
	want  []string // names, best first
	score []int    // their scores (0 for lookups by name)
}{
	// slack: P12 for all 8 slack tools; send_message's description says
	// "Slack" (+2). The rest tie at 12 and go by name.
	{"slack", 0, []string{"mcp__slack__send_message", "mcp__slack__add_reaction", "mcp__slack__get_channel_history", "mcp__slack__get_users", "mcp__slack__list_channels"},
		[]int{14, 12, 12, 12, 12}},
	// +jira issue: only the 6 jira tools have "jira" (name or description).
	// create_issue, get_issue: jira P12+d2, issue P12+d2 = 28;
	// transition_issue: jira P12, issue P12+d2 = 26; search_issues: jira
	// P12+d2, issue p6 ("issues"; not a word of "Jira issues") = 20;
	// add_comment: jira P12, issue d2 = 14; list_projects 12 is sixth.
	{"+jira issue", 0, []string{"mcp__jira__create_issue", "mcp__jira__get_issue", "mcp__jira__transition_issue", "mcp__jira__search_issues", "mcp__jira__add_comment"},
		[]int{28, 28, 26, 20, 14}},
	// pull request: gh create/merge_pull_request pull P12+d2, request
	// P12+d2 = 28; list_pull_requests pull P12+d2, request p6 ("requests")
	// = 20; HTTPRequest (built-in) request P10+d2 = 12.
	{"pull request", 0, []string{"mcp__github__create_pull_request", "mcp__github__merge_pull_request", "mcp__github__list_pull_requests", "HTTPRequest"},
		[]int{28, 28, 20, 12}},
	// screenshot: browser_take_screenshot P12+d2; "snapshot" is no match.
	{"screenshot", 0, []string{"mcp__playwright__browser_take_screenshot"}, []int{14}},
	// notebook jupyter: both built-ins: notebook P10+d2, jupyter d2 = 14.
	{"notebook jupyter", 0, []string{"NotebookEdit", "NotebookRead"}, []int{14, 14}},
	// web: WebSearch P10+d2 = 12, WebFetch P10 = 10, fetch and
	// browser_navigate only through their hints ("web page") = 4.
	{"web", 0, []string{"WebSearch", "WebFetch", "mcp__fetch__fetch", "mcp__playwright__browser_navigate"}, []int{12, 10, 4, 4}},
	// file: 9 tools have the part "file" and say "a file" (P12+d2 = 14);
	// figma sorts before filesystem ("fig" < "fil"). The tenth is the
	// first of the 6s: "file" inside the server part "filesystem" (or
	// "files"): filesystem create_directory.
	{"file", 10, []string{
		"mcp__figma__get_file", "mcp__filesystem__edit_file", "mcp__filesystem__get_file_info", "mcp__filesystem__move_file",
		"mcp__filesystem__read_file", "mcp__filesystem__write_file", "mcp__gdrive__read_file", "mcp__github__get_file_contents",
		"mcp__slack__upload_file", "mcp__filesystem__create_directory"},
		[]int{14, 14, 14, 14, 14, 14, 14, 14, 14, 6}},
	// +slack message: send_message slack P12+d2, message P12+d2 = 28;
	// search_messages slack P12, message p6 = 18; add_reaction and
	// reply_to_thread slack P12, message d2 = 14; then the 12s by name.
	{"+slack message", 0, []string{"mcp__slack__send_message", "mcp__slack__search_messages", "mcp__slack__add_reaction", "mcp__slack__reply_to_thread", "mcp__slack__get_channel_history"},
		[]int{28, 18, 14, 14, 12}},
	// An mcp__ prefix lists the server's tools by name, not scored.
	{"mcp__postgres", 0, []string{"mcp__postgres__describe_table", "mcp__postgres__execute", "mcp__postgres__list_tables", "mcp__postgres__query"}, []int{0, 0, 0, 0}},
	{"mcp__github", 3, []string{"mcp__github__add_issue_comment", "mcp__github__create_branch", "mcp__github__create_issue"}, []int{0, 0, 0}},
	// An unknown server falls back to keywords, which find nothing.
	{"mcp__nosuchserver", 0, nil, nil},
	// select: picks exact names in the order asked (case-insensitive as a
	// fallback), skips unknown ones and repeats, ignores max_results.
	{"select:WebFetch, mcp__slack__send_message,Nope,webfetch", 1, []string{"WebFetch", "mcp__slack__send_message"}, []int{0, 0}},
	// An exact name (ignoring case) wins outright, though NotebookRead
	// would score too.
	{"notebookedit", 0, []string{"NotebookEdit"}, []int{0}},
	// read_file: no part holds "_", so nothing else matches; the full
	// names of two tools contain it: 3 each.
	{"read_file", 0, []string{"mcp__filesystem__read_file", "mcp__gdrive__read_file"}, []int{3, 3}},
	// notebookr: only the full name "notebookread" contains it: 3.
	{"notebookr", 0, []string{"NotebookRead"}, []int{3}},
	// mcp resource: CamelCase with an acronym: ReadMCPResource has the
	// parts read, mcp, resource: mcp P10+d2, resource P10+d2 = 24;
	// ListMcpResources: mcp P10+d2, resource p5 = 17. MCP tools lose their
	// "mcp__" prefix, so "mcp" matches none of them.
	{"mcp resource", 0, []string{"ReadMCPResource", "ListMcpResources"}, []int{24, 17}},
	// +database query: only three tools say "database" (name, hint or
	// description word; "databases" does not count). notion query_database:
	// database P12+d2, query P12+d2 = 28; postgres query: database h4+d2,
	// query P12+d2 = 20; postgres list_tables: database d2 = 2.
	{"+database query", 0, []string{"mcp__notion__query_database", "mcp__postgres__query", "mcp__postgres__list_tables"}, []int{28, 20, 2}},
	// sql: postgres query h4+d2 = 6; sqlite read/write_query p6 ("sqlite")
	// = 6; postgres execute d2 = 2.
	{"sql", 0, []string{"mcp__postgres__query", "mcp__sqlite__read_query", "mcp__sqlite__write_query", "mcp__postgres__execute"}, []int{6, 6, 6, 2}},
	// Hints alone: 4 each.
	{"billing", 0, []string{"mcp__stripe__create_invoice", "mcp__stripe__list_payments"}, []int{4, 4}},
	{"ticket", 0, []string{"mcp__jira__create_issue", "mcp__jira__search_issues"}, []int{4, 4}},
	// logs container: docker container_logs (P12+d2)×2 = 28; run_container,
	// stop_container container P12+d2, kubernetes pod_logs logs P12+d2 =
	// 14; list_containers container p6 = 6.
	{"logs container", 0, []string{"mcp__docker__container_logs", "mcp__docker__run_container", "mcp__docker__stop_container", "mcp__kubernetes__pod_logs", "mcp__docker__list_containers"},
		[]int{28, 14, 14, 14, 6}},
	// time: both time-server tools P12+d2; "times" in get_file_info's
	// description is not the word.
	{"time", 0, []string{"mcp__time__convert_time", "mcp__time__get_current_time"}, []int{14, 14}},
	// delete: delete_pod, delete_entities P12+d2 = 14; NotebookEdit and
	// sqlite write_query d2 = 2 ("N" sorts before "m").
	{"delete", 0, []string{"mcp__kubernetes__delete_pod", "mcp__memory__delete_entities", "NotebookEdit", "mcp__sqlite__write_query"}, []int{14, 14, 2, 2}},
	// task plan: Task task P10+d2 = 12; TodoWrite task d2, plan h4 = 6.
	{"task plan", 0, []string{"Task", "TodoWrite"}, []int{12, 6}},
	// +graph entities: delete_entities and create_relations never say
	// "graph" and drop out. create_entities graph d2, entities P12+d2 =
	// 16; read_graph graph P12+d2 = 14; search_nodes graph d2 = 2.
	{"+graph entities", 0, []string{"mcp__memory__create_entities", "mcp__memory__read_graph", "mcp__memory__search_nodes"}, []int{16, 14, 2}},
	// Terms are lower-cased: HTTP is the part http of HTTPRequest, P10+d2.
	{"HTTP", 0, []string{"HTTPRequest"}, []int{12}},
	// web page: notion create/get/update_page page P12+d2 = 14; WebSearch
	// 12; WebFetch 10; fetch and browser_navigate web h4 + page h4 = 8.
	// Five playwright/notion tools follow at 2 (page d2).
	{"web page", 6, []string{"mcp__notion__create_page", "mcp__notion__get_page", "mcp__notion__update_page", "WebSearch", "WebFetch", "mcp__fetch__fetch"},
		[]int{14, 14, 14, 12, 10, 8}},
	// A required term nothing has empties the result.
	{"+zzz file", 0, nil, nil},
	// White space only: nothing.
	{"   ", 0, nil, nil},
}

func TestSearchRanking(t *testing.T) {
	catalog := loadCatalog(t)
	if n := len(searchCases); n < 20 {
		t.Fatalf("only %d queries", n)
	}
	for _, c := range searchCases {
		got := tool.Search(catalog, c.query, c.max)
		var names []string
		var scores []int
		for _, m := range got {
			names = append(names, m.Tool.Name())
			scores = append(scores, m.Score)
		}
		if !slices.Equal(names, c.want) || !slices.Equal(scores, c.score) {
			t.Errorf("Search(%q, %d):\n got  %v %v\n want %v %v", c.query, c.max, names, scores, c.want, c.score)
		}
	}
}

// The catalog's order does not change the ranking.
func TestSearchIgnoresCatalogOrder(t *testing.T) {
	catalog := loadCatalog(t)
	reversed := slices.Clone(catalog)
	slices.Reverse(reversed)
	for _, c := range searchCases {
		a, b := tool.Search(catalog, c.query, c.max), tool.Search(reversed, c.query, c.max)
		if !slices.EqualFunc(a, b, func(x, y tool.Match) bool { return x.Tool == y.Tool && x.Score == y.Score }) {
			t.Errorf("Search(%q) depends on the catalog's order", c.query)
		}
	}
}

func TestNameParts(t *testing.T) {
	for name, want := range map[string]string{
		"mcp__github__create_issue": "github create issue",
		"ReadMCPResource":           "read mcp resource",
		"ListMcpResources":          "list mcp resources",
		"HTTPRequest":               "http request",
		"NotebookEdit":              "notebook edit",
		"mcp__slack__send-message":  "slack send message",
		"getURL2Text":               "get url2 text",
		"Bash":                      "bash",
		"mcp__aws__s3_get_object":   "aws s3 get object",
	} {
		if got := strings.Join(tool.NameParts(name), " "); got != want {
			t.Errorf("NameParts(%q) = %q, want %q", name, got, want)
		}
	}
}

// A description matches at word boundaries only; a term that begins or
// ends with punctuation needs no boundary there.
func TestSearchWordBoundaries(t *testing.T) {
	mk := func(name, desc string) *tool.Tool {
		return tool.MustBuild(tool.Definition{Name: name, Description: desc, Call: call})
	}
	catalog := []*tool.Tool{
		mk("A", "Reads the pre-commit config."),
		mk("B", "Recommit everything."),
		mk("C", "Uses git commit -m to record."),
		mk("D", "Counts the commits."),
	}
	got := names(tool.Search(catalog, "commit", 0))
	if want := []string{"A", "C"}; !slices.Equal(got, want) {
		t.Errorf("commit: got %v, want %v", got, want)
	}
	if got := names(tool.Search(catalog, "-m", 0)); !slices.Equal(got, []string{"C"}) {
		t.Errorf("-m: got %v", got)
	}
}

func names(ms []tool.Match) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Tool.Name())
	}
	return out
}
