package schemas

import (
	"embed"
	"slices"
	"strings"
)

// The schema files live next to the code so that the Go types, the codecs and
// the contract published to other languages change in one commit.
//
//go:embed jsonschema/*.json
var schemaFiles embed.FS

// eventTypes is every ce-type, sorted.
var eventTypes = []string{
	TypeApprovalDecision,
	TypeApprovalRequest,
	TypeDispatch,
	TypeToolProgress,
	TypeToolResult,
	TypeToolUse,
	TypeTurnCancel,
	TypeTurnDiscard,
	TypeTurnDone,
	TypeTurnEnd,
}

// EventTypes returns every event type (ce-type) of the contract, sorted.
func EventTypes() []string { return slices.Clone(eventTypes) }

// JSONSchema returns the JSON Schema (draft 2020-12) of the JSON form of
// eventType's data, and false for a type that is not part of the contract.
func JSONSchema(eventType string) ([]byte, bool) {
	if _, found := slices.BinarySearch(eventTypes, eventType); !found {
		return nil, false
	}
	b, err := schemaFiles.ReadFile("jsonschema/" + schemaFile(eventType))
	if err != nil {
		return nil, false
	}
	return b, true
}

// schemaFile names the file of a type: dev.toolwire.tool_use.v1 → tool_use.v1.json,
// the last segment of the schema's $id.
func schemaFile(eventType string) string {
	return strings.TrimPrefix(eventType, "dev.toolwire.") + ".json"
}
