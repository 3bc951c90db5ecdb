package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolwire/toolwire/coercion"
	"github.com/toolwire/toolwire/tool"
)

// MaxDescriptionChars caps an MCP tool's description (docs/tools.md, External tools).
const MaxDescriptionChars = 2048

// TruncationMark ends a description that was cut to MaxDescriptionChars.
const TruncationMark = "… [truncated]"

// The _meta keys toolwire reads (docs/tools.md, Deferred tools and ToolSearch).
const (
	MetaAlwaysLoad = "anthropic/alwaysLoad"
	MetaSearchHint = "anthropic/searchHint"
)

// ToolInfo is what toolwire read from an MCP tool's listing. The tool
// contract carries most of it too (Origin, OpenWorld, AlwaysLoad,
// SearchHint); the MCP name, the title and whether the description was cut
// are only here.
type ToolInfo struct {
	// Name is the toolwire name, mcp__<server>__<tool>.
	Name string
	// Server is the server's configured name (the origin).
	Server string
	// MCPName is the tool's name on the server, the one calls use.
	MCPName string
	// Title is the tool's display title (title, else annotations.title).
	Title string

	// ReadOnly comes from annotations.readOnlyHint; it also makes the tool
	// concurrency-safe.
	ReadOnly bool
	// Destructive comes from annotations.destructiveHint.
	Destructive bool
	// OpenWorld comes from annotations.openWorldHint.
	OpenWorld bool

	// AlwaysLoad is _meta["anthropic/alwaysLoad"] == true: never deferred.
	AlwaysLoad bool
	// SearchHint is _meta["anthropic/searchHint"] with whitespace collapsed.
	SearchHint string
	// DescriptionTruncated says the description was cut to MaxDescriptionChars.
	DescriptionTruncated bool
}

// Origin is the tool's origin in the form "mcp:<server>".
func (i ToolInfo) Origin() string { return "mcp:" + i.Server }

// ToolName is the toolwire name of an MCP server's tool:
// "mcp__<server>__<tool>", where every character outside [A-Za-z0-9_-] (the
// set model APIs accept in tool names) is replaced by "_", one "_" per
// character (so "fs.read" becomes "fs_read" and "é" one "_"). Replacing can
// make two names equal; Server keeps the first such tool in listing order.
// The length is not capped.
func ToolName(server, tool string) string {
	return "mcp__" + sanitize(server) + "__" + sanitize(tool)
}

func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// CapDescription cuts d to MaxDescriptionChars characters (runes), the
// TruncationMark included, at a rune boundary; it reports whether it cut.
func CapDescription(d string) (string, bool) {
	if utf8.RuneCountInString(d) <= MaxDescriptionChars {
		return d, false
	}
	keep := MaxDescriptionChars - utf8.RuneCountInString(TruncationMark)
	n := 0
	for i := range d {
		if n == keep {
			return strings.TrimRight(d[:i], " \t\r\n") + TruncationMark, true
		}
		n++
	}
	return d, false // unreachable: d has more than keep runes
}

// SearchHint collapses a _meta search hint's whitespace; a value that is
// not a string gives "".
func SearchHint(v any) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	return strings.Join(strings.Fields(s), " ")
}

// info reads what toolwire needs from a listed tool.
//
// Annotations are hints and are read fail-closed: only an explicit true
// counts (the MCP spec's defaults, destructive and open-world when absent,
// are not applied — the best-known coding agent reads absent hints as false, and the
// pipeline's defaults are already the careful ones). A tool that claims to
// be read-only and destructive at once is taken as destructive and not
// read-only: the hint that makes the scheduler more careful wins.
func info(server string, t *mcpsdk.Tool) ToolInfo {
	i := ToolInfo{Name: ToolName(server, t.Name), Server: server, MCPName: t.Name, Title: t.Title}
	if a := t.Annotations; a != nil {
		if i.Title == "" {
			i.Title = a.Title
		}
		i.Destructive = a.DestructiveHint != nil && *a.DestructiveHint
		i.ReadOnly = a.ReadOnlyHint && !i.Destructive
		i.OpenWorld = a.OpenWorldHint != nil && *a.OpenWorldHint
	}
	if t.Meta != nil {
		i.AlwaysLoad = t.Meta[MetaAlwaysLoad] == true
		i.SearchHint = SearchHint(t.Meta[MetaSearchHint])
	}
	return i
}

// inputSchema is the tool's input schema as JSON: {"type":"object"} when
// it has none, "type":"object" added when it names no type. A schema that
// is not an object schema, or that the router could not compile, is an
// error: such a tool is left out rather than offered with a looser schema.
func inputSchema(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("input schema is not a JSON object")
	}
	switch typ, ok := m["type"]; {
	case !ok:
		m["type"] = json.RawMessage(`"object"`)
		if b, err = json.Marshal(m); err != nil {
			return nil, err
		}
	case !bytes.Equal(bytes.TrimSpace(typ), []byte(`"object"`)):
		return nil, fmt.Errorf("input schema has type %s, not \"object\"", typ)
	}
	if _, err := coercion.Compile(b); err != nil {
		return nil, err
	}
	return b, nil
}

// build turns the listed tools into toolwire tools, skipping (with a
// warning) tools without a name, with an unusable schema, or whose name
// collides with an earlier one.
func (s *Server) build(listed []*mcpsdk.Tool) ([]*tool.Tool, []ToolInfo) {
	var tools []*tool.Tool
	var infos []ToolInfo
	seen := map[string]string{}
	for _, t := range listed {
		if t == nil || t.Name == "" {
			s.log.Warn("mcp: skipping a tool without a name")
			continue
		}
		i := info(s.cfg.Name, t)
		if prev, ok := seen[i.Name]; ok {
			s.log.Warn("mcp: skipping a tool whose name collides with another's", "tool", t.Name, "other", prev, "name", i.Name)
			continue
		}
		schema, err := inputSchema(t.InputSchema)
		if err != nil {
			s.log.Warn("mcp: skipping a tool with an unusable input schema", "tool", t.Name, "err", err)
			continue
		}
		desc, cut := CapDescription(t.Description)
		i.DescriptionTruncated = cut
		def := tool.Definition{
			Name:           i.Name,
			Origin:         tool.Origin{Kind: tool.OriginMCP, Server: s.cfg.Name},
			AlwaysLoad:     i.AlwaysLoad,
			SearchHint:     i.SearchHint,
			Description:    desc,
			InputSchema:    schema,
			UserFacingName: userFacingName(i),
			Call: func(ctx context.Context, input json.RawMessage, tc tool.TurnContext, progress tool.Progress) (tool.Result, error) {
				return s.call(ctx, i, input, tc.IdempotencyKey, progress)
			},
		}
		if i.ReadOnly {
			def.ReadOnly, def.ConcurrencySafe = tool.Always, tool.Always
		}
		if i.Destructive {
			def.Destructive = tool.Always
		}
		if i.OpenWorld {
			def.OpenWorld = tool.Always
		}
		built, err := tool.Build(def)
		if err != nil {
			s.log.Warn("mcp: skipping a tool", "tool", t.Name, "err", err)
			continue
		}
		seen[i.Name] = t.Name
		tools = append(tools, built)
		infos = append(infos, i)
	}
	return tools, infos
}

// userFacingName is "<server> - <title or tool name> (MCP)".
func userFacingName(i ToolInfo) string {
	name := i.Title
	if name == "" {
		name = i.MCPName
	}
	return i.Server + " - " + name + " (MCP)"
}

// mapResult turns a call's result into the text the model gets: text parts
// joined by newlines, other parts as short placeholders ("[image:
// image/png]"), an embedded text resource with its text. A result with no
// content but structured content gets that as JSON.
func mapResult(res *mcpsdk.CallToolResult) tool.Result {
	if res == nil {
		return tool.Result{}
	}
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcpsdk.TextContent:
			parts = append(parts, c.Text)
		case *mcpsdk.ImageContent:
			parts = append(parts, "[image: "+orUnknown(c.MIMEType)+"]")
		case *mcpsdk.AudioContent:
			parts = append(parts, "[audio: "+orUnknown(c.MIMEType)+"]")
		case *mcpsdk.ResourceLink:
			parts = append(parts, "[resource link: "+c.URI+"]")
		case *mcpsdk.EmbeddedResource:
			switch r := c.Resource; {
			case r == nil:
				parts = append(parts, "[resource]")
			case r.Text != "":
				parts = append(parts, "[resource: "+r.URI+"]\n"+r.Text)
			default:
				parts = append(parts, fmt.Sprintf("[resource: %s (%s, %d bytes)]", r.URI, orUnknown(r.MIMEType), len(r.Blob)))
			}
		default:
			parts = append(parts, "[unsupported content]")
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return tool.Result{Content: strings.Join(parts, "\n"), IsError: res.IsError}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}
