package openaichat

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// wireChunk is the part of a chat.completion.chunk the parser needs;
// decodeChunk fills it and skips everything else (content, reasoning,
// logprobs, usage, obfuscation) without building it. Byte slices point into
// the event's data or the decoder's arena, valid until the next chunk.
type wireChunk struct {
	ID     []byte
	Object []byte
	// Error is the raw "error" value, nil when absent.
	Error   []byte
	Choices []wireChoice
}

type wireChoice struct {
	// Index is the choice's index, 0 when absent.
	Index        int
	FinishReason []byte
	ToolCalls    []wireToolCall
	// FunctionCall is the legacy delta.function_call, set when HasFunctionCall.
	FunctionCall    wireToolCall
	HasFunctionCall bool
}

// wireToolCall is one tool_calls fragment.
type wireToolCall struct {
	Index    int
	HasIndex bool
	// ID is the call id; a number is kept as its literal text.
	ID   []byte
	Name []byte
	// Arguments is the fragment's argument text as the JSON string held it,
	// still escaped; or, when ArgsObject, an object's raw JSON.
	Arguments  []byte
	ArgsObject bool
}

// reset empties w for the next chunk, keeping its slices' storage.
func (w *wireChunk) reset() {
	w.ID, w.Object, w.Error = nil, nil, nil
	w.Choices = w.Choices[:0]
}

// addChoice appends an empty choice, reusing storage of an earlier chunk.
func (w *wireChunk) addChoice() *wireChoice {
	if len(w.Choices) < cap(w.Choices) {
		w.Choices = w.Choices[:len(w.Choices)+1]
		c := &w.Choices[len(w.Choices)-1]
		*c = wireChoice{ToolCalls: c.ToolCalls[:0]}
		return c
	}
	w.Choices = append(w.Choices, wireChoice{})
	return &w.Choices[len(w.Choices)-1]
}

// addToolCall appends an empty fragment, reusing storage of an earlier chunk.
func (c *wireChoice) addToolCall() *wireToolCall {
	if len(c.ToolCalls) < cap(c.ToolCalls) {
		c.ToolCalls = c.ToolCalls[:len(c.ToolCalls)+1]
	} else {
		c.ToolCalls = append(c.ToolCalls, wireToolCall{})
	}
	tc := &c.ToolCalls[len(c.ToolCalls)-1]
	*tc = wireToolCall{}
	return tc
}

// isError reports whether a chunk is an error report rather than a
// completion chunk: vLLM's {"object":"error",...}, or a non-empty "error"
// field, which OpenAI and SGLang send alone and OpenRouter inside a normal chunk.
func (w *wireChunk) isError() bool {
	if string(w.Object) == "error" {
		return true
	}
	switch string(w.Error) {
	case "", "null", `""`, "false":
		return false
	}
	return true
}

// describeError renders an error payload as "type code: message". data is
// the whole event data; its "error" member is described when there is one,
// else data itself (vLLM puts message, type and code at the top level).
// Data of another shape is quoted, clipped.
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
	payload := data
	if len(outer.Error) > 0 && string(outer.Error) != "null" {
		payload = outer.Error
		var s string
		if json.Unmarshal(payload, &s) == nil && s != "" {
			return s
		}
	}
	var e struct {
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(payload, &e) != nil {
		return clip(data)
	}
	var head []string
	if e.Type != "" && e.Type != "error" {
		head = append(head, e.Type)
	}
	if code := codeText(e.Code); code != "" && code != e.Type {
		head = append(head, code)
	}
	switch {
	case len(head) == 0 && e.Message == "":
		return clip(data)
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
