package anthropic

import (
	"encoding/json"
	"fmt"
)

// wireEvent is the part of a stream event the parser needs; decodeEvent
// fills it and skips everything else (usage, text, citations) without
// building it. Shapes that vary by event stay raw and are decoded only for
// the events that use them.
type wireEvent struct {
	Type string
	// Index is the content-block slot, -1 when absent.
	Index        int
	Message      []byte // raw JSON
	ContentBlock struct {
		Type, ID, Name string
		Input          []byte // raw JSON
	}
	Delta struct {
		Type string
		// PartialJSON may point into the event's data or the decoder's arena.
		PartialJSON []byte
		StopReason  string
	}
	Error []byte // raw JSON
}

// messageID reads the id of a message_start's message; "" when it has none.
func messageID(raw json.RawMessage) string {
	var m struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	return m.ID
}

// describeError renders an error event's payload as "type: message", falling
// back to the raw data for payloads of another shape (gateways send those).
func describeError(raw json.RawMessage, data []byte) string {
	var e struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil || (e.Type == "" && e.Message == "") {
		return clip(data)
	}
	switch {
	case e.Type == "":
		return e.Message
	case e.Message == "":
		return e.Type
	}
	return e.Type + ": " + e.Message
}

// maxClip bounds the raw data quoted in a message.
const maxClip = 200

func clip(b []byte) string {
	if len(b) > maxClip {
		return fmt.Sprintf("%q...", b[:maxClip])
	}
	return fmt.Sprintf("%q", b)
}
