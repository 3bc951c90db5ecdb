package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolName(t *testing.T) {
	for _, c := range []struct{ server, tool, want string }{
		{"fs", "read_file", "mcp__fs__read_file"},
		{"fs", "Read-File2", "mcp__fs__Read-File2"},
		{"my.server", "files/read", "mcp__my_server__files_read"},
		{"git hub", "list repos!", "mcp__git_hub__list_repos_"},
		{"srv", "café", "mcp__srv__caf_"}, // one "_" per character, not per byte
		{"srv", "日本", "mcp__srv____"},     // two characters, two "_"
		{"a__b", "c", "mcp__a__b__c"},     // kept: "_" is allowed
		{"srv", "x.y:z@w", "mcp__srv__x_y_z_w"},
	} {
		if got := ToolName(c.server, c.tool); got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
	}
}

func TestCapDescription(t *testing.T) {
	short := strings.Repeat("a", MaxDescriptionChars)
	if got, cut := CapDescription(short); got != short || cut {
		t.Errorf("a description of exactly the cap was changed (cut=%v)", cut)
	}
	long := strings.Repeat("é", MaxDescriptionChars+1)
	got, cut := CapDescription(long)
	if !cut || !utf8.ValidString(got) || utf8.RuneCountInString(got) != MaxDescriptionChars || !strings.HasSuffix(got, TruncationMark) {
		t.Fatalf("cut=%v valid=%v runes=%d suffix=%v", cut, utf8.ValidString(got), utf8.RuneCountInString(got), strings.HasSuffix(got, TruncationMark))
	}
	if !strings.HasPrefix(long, strings.TrimSuffix(got, TruncationMark)) {
		t.Error("the kept part is not a prefix of the description")
	}
	// Whitespace at the cut is not kept before the mark.
	spaced := strings.Repeat("word ", 1000)
	got, _ = CapDescription(spaced)
	if strings.Contains(got, " "+TruncationMark) || utf8.RuneCountInString(got) > MaxDescriptionChars {
		t.Errorf("cut at a space: %q", got[len(got)-30:])
	}
}

func TestSearchHint(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{"  find a\n\trecord   by its key ", "find a record by its key"},
		{"one", "one"},
		{" \n ", ""},
		{42, ""},
		{nil, ""},
		{[]any{"a"}, ""},
	} {
		if got := SearchHint(c.in); got != c.want {
			t.Errorf("SearchHint(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestInfo(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		name string
		tool mcpsdk.Tool
		want ToolInfo
	}{
		{"no annotations", mcpsdk.Tool{Name: "t"}, ToolInfo{}},
		{"read-only", mcpsdk.Tool{Name: "t", Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true}}, ToolInfo{ReadOnly: true}},
		{"destructive", mcpsdk.Tool{Name: "t", Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: &yes}}, ToolInfo{Destructive: true}},
		{"destructive false", mcpsdk.Tool{Name: "t", Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &no}}, ToolInfo{}},
		{"both: destructive wins", mcpsdk.Tool{Name: "t", Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes}}, ToolInfo{Destructive: true}},
		{"open world", mcpsdk.Tool{Name: "t", Annotations: &mcpsdk.ToolAnnotations{OpenWorldHint: &yes, Title: "T"}}, ToolInfo{OpenWorld: true, Title: "T"}},
		{"meta", mcpsdk.Tool{Name: "t", Title: "Top", Meta: mcpsdk.Meta{MetaAlwaysLoad: true, MetaSearchHint: " a  b\nc "}}, ToolInfo{AlwaysLoad: true, SearchHint: "a b c", Title: "Top"}},
		{"meta not true", mcpsdk.Tool{Name: "t", Meta: mcpsdk.Meta{MetaAlwaysLoad: "true", MetaSearchHint: 3}}, ToolInfo{}},
	} {
		got := info("s", &c.tool)
		c.want.Name, c.want.Server, c.want.MCPName = "mcp__s__t", "s", "t"
		if got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestInputSchema(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string // "" means an error
	}{
		{nil, `{"type":"object"}`},
		{map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}, `{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{map[string]any{"properties": map[string]any{}}, `{"properties":{},"type":"object"}`},
		{map[string]any{"type": "string"}, ""},
		{"not a schema", ""},
		{map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "nonsense"}}}, ""},
	} {
		got, err := inputSchema(c.in)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("inputSchema(%v) = %s, want an error", c.in, got)
		case c.want != "" && err != nil:
			t.Errorf("inputSchema(%v): %v", c.in, err)
		case c.want != "" && string(got) != c.want:
			t.Errorf("inputSchema(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestMapResult(t *testing.T) {
	res := mapResult(&mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{
		&mcpsdk.TextContent{Text: "one"},
		&mcpsdk.ImageContent{MIMEType: "image/png", Data: []byte("x")},
		&mcpsdk.AudioContent{},
		&mcpsdk.ResourceLink{URI: "file:///a"},
		&mcpsdk.EmbeddedResource{Resource: &mcpsdk.ResourceContents{URI: "file:///b", Text: "bee"}},
		&mcpsdk.EmbeddedResource{Resource: &mcpsdk.ResourceContents{URI: "file:///c", MIMEType: "application/zip", Blob: []byte("12345")}},
		&mcpsdk.TextContent{Text: "two"},
	}})
	want := "one\n[image: image/png]\n[audio: unknown type]\n[resource link: file:///a]\n[resource: file:///b]\nbee\n[resource: file:///c (application/zip, 5 bytes)]\ntwo"
	if res.Content != want || !res.IsError {
		t.Errorf("got %q (error %v), want %q", res.Content, res.IsError, want)
	}
	res = mapResult(&mcpsdk.CallToolResult{StructuredContent: json.RawMessage(`{"n":1}`)})
	if res.Content != `{"n":1}` || res.IsError {
		t.Errorf("structured: %+v", res)
	}
	if res := mapResult(&mcpsdk.CallToolResult{}); res.Content != "" || res.IsError {
		t.Errorf("empty: %+v", res)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []ServerConfig{
		{},
		{Name: "x"},
		{Name: "x", Command: "a", URL: "http://h"},
		{Name: "x", URL: "http://h", Env: []string{"A=1"}},
		{Name: "x", Command: "a", Headers: map[string]string{"A": "1"}},
	} {
		if err := c.validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	var cfg ServerConfig
	if err := json.Unmarshal([]byte(`{"name":"fs","command":"srv","args":["-v"],"env":["A=1"]}`), &cfg); err != nil || cfg.validate() != nil || cfg.Args[0] != "-v" || cfg.Env[0] != "A=1" {
		t.Errorf("JSON config: %+v %v", cfg, err)
	}
}
