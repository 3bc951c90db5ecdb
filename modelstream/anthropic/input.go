package anthropic

import (
	"bytes"
	"encoding/json"

	"github.com/toolwire/toolwire/modelstream/internal/jsonwire"
)

// parseInput checks that a tool call's argument text is one JSON object and
// returns it compacted; blank text is the empty object, as no-argument tools
// send it.
func parseInput(text []byte) (json.RawMessage, error) {
	return jsonwire.ParseInput(text, "tool input is", "input")
}

// isObjectWithMembers reports whether raw is a JSON object with at least one
// member, i.e. a real input rather than the "{}" placeholder.
func isObjectWithMembers(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return false
	}
	return len(bytes.TrimSpace(raw[1:len(raw)-1])) > 0
}
