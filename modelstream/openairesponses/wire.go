package openairesponses

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// wireEvent is the part of a Responses stream event the parser needs;
// decodeEvent fills it and skips everything else (text, reasoning, usage,
// tools, instructions) without building it. Byte slices point into the
// event's data or the decoder's arena, valid until the next event.
type wireEvent struct {
	Type           string
	OutputIndex    int
	HasOutputIndex bool
	ItemID         []byte
	Name           []byte
	// Delta, Arguments and Input are string contents still escaped.
	Delta        []byte
	Arguments    []byte
	HasArguments bool
	Input        []byte
	HasInput     bool
	// Error is the raw "error" value, nil when absent.
	Error    []byte
	Item     wireItem
	HasItem  bool
	Response wireResponse
}

// wireItem is an output item: only the items the client executes matter.
type wireItem struct {
	Type, ID, CallID, Name, Status []byte
	// Arguments is the string content still escaped or, when ArgsObject, an
	// object's raw JSON (tool_search_call).
	Arguments    []byte
	HasArguments bool
	ArgsObject   bool
	// Input (custom_tool_call), Action (local_shell_call, shell_call) and
	// Operation (apply_patch_call) are raw JSON, nil when absent; they are
	// checked when the item turns out to be a call.
	Input, Action, Operation []byte
	// Execution says who runs a tool_search_call; EnvType is the type of a
	// shell_call's environment, "" when it has none.
	Execution, EnvType []byte
}

// wireResponse is the "response" of response.* events.
type wireResponse struct {
	ID, Status       []byte
	IncompleteReason []byte
	// Error is the raw "error" value, nil when absent.
	Error  []byte
	Output []wireItem
}

// reset empties w for the next event, keeping its slices' storage.
func (w *wireEvent) reset() {
	out := w.Response.Output[:0]
	*w = wireEvent{}
	w.Response.Output = out
}

// addOutput appends an empty item, reusing storage of an earlier event.
func (r *wireResponse) addOutput() *wireItem {
	if len(r.Output) < cap(r.Output) {
		r.Output = r.Output[:len(r.Output)+1]
	} else {
		r.Output = append(r.Output, wireItem{})
	}
	it := &r.Output[len(r.Output)-1]
	*it = wireItem{}
	return it
}

// describeError renders an error event's data as "type code: message":
// its "error" member when there is one, else the data itself (the
// documented error event has code and message at the top level). Data of
// another shape is quoted, clipped.
func describeError(data []byte) string {
	var outer struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &outer) != nil {
		if len(data) == 0 {
			return "no data"
		}
		return clip(data)
	}
	if len(outer.Error) > 0 && string(outer.Error) != "null" {
		if s := describePayload(outer.Error); s != "" {
			return s
		}
	}
	if s := describePayload(data); s != "" {
		return s
	}
	return clip(data)
}

// describePayload renders an error object, or a bare string; "" when raw
// says nothing of use.
func describePayload(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var e struct {
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return ""
	}
	var head []string
	if e.Type != "" && e.Type != "error" {
		head = append(head, e.Type)
	}
	if code := codeText(e.Code); code != "" && code != e.Type {
		head = append(head, code)
	}
	switch {
	case len(head) == 0:
		return e.Message
	case e.Message == "":
		return strings.Join(head, " ")
	}
	return strings.Join(head, " ") + ": " + e.Message
}

// codeText renders an error code, a string or a number.
func codeText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// maxClip bounds the raw data quoted in a message.
const maxClip = 200

func clip(b []byte) string {
	if len(b) > maxClip {
		return fmt.Sprintf("%q...", b[:maxClip])
	}
	return strconv.Quote(string(b))
}
