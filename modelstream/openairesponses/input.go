package openairesponses

import (
	"encoding/json"

	"github.com/toolwire/toolwire/modelstream/internal/jsonwire"
)

// parseInput checks that a tool call's argument text is one JSON object and
// returns it compacted; blank text is the empty object, as no-argument tools
// send it.
func parseInput(text []byte) (json.RawMessage, error) {
	return jsonwire.ParseInput(text, "tool arguments are", "arguments")
}
