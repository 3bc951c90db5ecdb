package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// ToolSearchName is the name of the tool that finds deferred tools.
const ToolSearchName = "ToolSearch"

const toolSearchDescription = `Fetches the full definitions of deferred tools so that they can be called. Deferred tools are listed by name only, in <available-deferred-tools>; until a tool is fetched only its name is known, and it cannot be called.

Query forms:
- "select:Read,Edit" fetches these tools by exact name.
- "slack send message" searches by keywords, best matches first (up to max_results). Name parts weigh most, then the tool's search hint, then words of its description.
- "+slack send" requires "slack" and ranks by the rest.
- "mcp__github" lists the tools of that MCP server.

The result is JSON: the names found ("matches") and each tool's name, description and input_schema ("tools").`

const toolSearchSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "description": "\"select:Name1,Name2\" for exact names, else keywords; prefix a keyword with + to require it."},
    "max_results": {"type": "integer", "minimum": 1, "default": 5, "description": "How many tools a keyword search returns at most."}
  },
  "required": ["query"],
  "additionalProperties": false
}`

// toolSearchInput is a ToolSearch call's input.
type toolSearchInput struct {
	Query      string `json:"query"`
	MaxResults int    `json:"max_results"`
}

// SearchOutput is what ToolSearch returns, as JSON text.
type SearchOutput struct {
	Query string `json:"query"`
	// Matches are the names found, best first.
	Matches []string `json:"matches"`
	// TotalTools is how many tools were searched (for ToolSearch: the
	// deferred tools).
	TotalTools int `json:"total_tools"`
	// Tools are the full definitions of the matches, in the same order.
	Tools []json.RawMessage `json:"tools"`
}

// NewToolSearch returns the ToolSearch tool over the tools catalog returns
// at each call (the deferred tools of the current Plan). It is
// concurrency-safe, read-only and never deferred; a call returns the
// SearchOutput of Search as compact JSON.
func NewToolSearch(catalog func() []*Tool) *Tool {
	return MustBuild(Definition{
		Name:            ToolSearchName,
		SearchHint:      "find and load deferred tools by name or keyword",
		AlwaysLoad:      true,
		Description:     toolSearchDescription,
		InputSchema:     json.RawMessage(toolSearchSchema),
		ConcurrencySafe: Always,
		ReadOnly:        Always,
		Activity: func(input json.RawMessage) string {
			var in toolSearchInput
			_ = json.Unmarshal(input, &in)
			return activityOf(ToolSearchName, in.Query)
		},
		Call: func(_ context.Context, input json.RawMessage, _ TurnContext, _ Progress) (Result, error) {
			var in toolSearchInput
			if err := json.Unmarshal(input, &in); err != nil {
				return Result{Content: "invalid input: " + err.Error(), IsError: true}, nil
			}
			if strings.TrimSpace(in.Query) == "" {
				return Result{Content: "query is empty", IsError: true}, nil
			}
			var tools []*Tool
			if catalog != nil {
				tools = catalog()
			}
			out, err := SearchJSON(tools, in.Query, in.MaxResults)
			if err != nil {
				return Result{}, err
			}
			return Result{Content: string(out)}, nil
		},
	})
}

// SearchJSON runs Search and renders its SearchOutput as compact JSON.
func SearchJSON(catalog []*Tool, query string, maxResults int) ([]byte, error) {
	matches := Search(catalog, query, maxResults)
	out := SearchOutput{Query: query, Matches: []string{}, Tools: []json.RawMessage{}}
	for _, t := range catalog {
		if t != nil {
			out.TotalTools++
		}
	}
	for _, m := range matches {
		def, err := RenderOne(FormatAnthropic, Entry{Tool: m.Tool})
		if err != nil {
			return nil, fmt.Errorf("ToolSearch: %w", err)
		}
		out.Matches = append(out.Matches, m.Tool.Name())
		out.Tools = append(out.Tools, def)
	}
	return marshalCompact(out)
}
