package openairesponses

import (
	"bytes"
	"encoding/json"

	"github.com/toolwire/toolwire/modelstream/internal/jsonwire"
)

// itemKind is a kind of output item the client must execute. Each becomes a
// call, so that a tool registered under its name runs it and any other gets
// the usual unknown-tool result with its call_id; dropping one would leave
// the call_id unanswered, and the provider rejects the next request.
type itemKind uint8

const (
	notClient itemKind = iota // an item OpenAI runs itself, or no call at all
	functionCall
	customToolCall
	localShellCall
	shellCall
	applyPatchCall
	toolSearchCall
)

// itemKinds describes each kind: its item type; the tool its calls are
// for, "" when the item names it; the item field holding the input; and
// how errors about that input begin. docs/stream-formats.md documents the
// mapping.
var itemKinds = [...]struct {
	typ, tool, field, subject string
}{
	functionCall:   {"function_call", "", "arguments", "tool arguments are"},
	customToolCall: {"custom_tool_call", "", "input", "tool input (the custom_tool_call input) is"},
	localShellCall: {"local_shell_call", "local_shell", "action", "tool input (the local_shell_call action) is"},
	shellCall:      {"shell_call", "shell", "action", "tool input (the shell_call action) is"},
	applyPatchCall: {"apply_patch_call", "apply_patch", "operation", "tool input (the apply_patch_call operation) is"},
	toolSearchCall: {"tool_search_call", "tool_search", "arguments", "tool arguments (the tool_search_call arguments) are"},
}

// isCallType reports whether typ is the type of an item that can be a
// client call, whoever turns out to run it.
func isCallType(typ []byte) bool {
	for k := functionCall; int(k) < len(itemKinds); k++ {
		if string(typ) == itemKinds[k].typ {
			return true
		}
	}
	return false
}

// kindOf says which client call an item is, notClient for any other item:
// a shell_call in a hosted container and a tool_search_call executed by the
// server run on OpenAI's side.
func kindOf(it *wireItem) itemKind {
	switch string(it.Type) {
	case "function_call":
		return functionCall
	case "custom_tool_call":
		return customToolCall
	case "local_shell_call":
		return localShellCall
	case "shell_call":
		if env := string(it.EnvType); env == "" || env == "local" {
			return shellCall
		}
	case "apply_patch_call":
		return applyPatchCall
	case "tool_search_call":
		if string(it.Execution) == "client" {
			return toolSearchCall
		}
	}
	return notClient
}

// typeName is the item type of k, for messages.
func (k itemKind) typeName() string { return itemKinds[k].typ }

// input returns the item's input as the item holds it: the content of a
// JSON string still escaped, or, when raw, a JSON value as it is; ok is
// false when the item has none. Arguments are a JSON string on the wire,
// but an object is unambiguous and tool_search_call sends one.
func (k itemKind) input(it *wireItem) (v []byte, raw, ok bool) {
	switch k {
	case functionCall, toolSearchCall:
		return it.Arguments, it.ArgsObject, it.HasArguments
	case customToolCall:
		return stringOrRaw(it.Input)
	case localShellCall, shellCall:
		return it.Action, true, len(it.Action) > 0 && !jsonwire.IsNull(it.Action)
	case applyPatchCall:
		return it.Operation, true, len(it.Operation) > 0 && !jsonwire.IsNull(it.Operation)
	}
	return nil, false, false
}

// stringOrRaw splits a raw JSON value: a string's content still escaped,
// else the value itself, raw; a missing or null value is no input.
func stringOrRaw(v []byte) (content []byte, raw, ok bool) {
	switch {
	case len(v) == 0 || jsonwire.IsNull(v):
		return nil, false, false
	case v[0] == '"':
		return v[1 : len(v)-1 : len(v)-1], false, true
	}
	return v, true, true
}

// freeFormInput wraps a custom tool's free-form text as the object every
// tool takes: {"input": text}.
func freeFormInput(text []byte) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the text goes to a tool, not into HTML
	// Encoding a string cannot fail; invalid UTF-8 becomes U+FFFD, as decoding does.
	_ = enc.Encode(struct {
		Input string `json:"input"`
	}{string(text)})
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
