package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// wireChunk is the part of a GenerateContentResponse the parser needs;
// encoding/json skips the rest (text, thoughtSignature, usageMetadata...).
type wireChunk struct {
	Candidates     []wireCandidate `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	ResponseID string `json:"responseId"`
	// Error is the error object a failing stream sends after HTTP 200.
	Error json.RawMessage `json:"error"`
}

type wireCandidate struct {
	// Index is the candidate number, 0 when omitted.
	Index        int    `json:"index"`
	FinishReason string `json:"finishReason"`
	Content      *struct {
		Parts []wirePart `json:"parts"`
	} `json:"content"`
}

type wirePart struct {
	FunctionCall *wireFunctionCall `json:"functionCall"`
}

type wireFunctionCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Args is the arguments object; nil when omitted.
	Args        json.RawMessage  `json:"args"`
	PartialArgs []wirePartialArg `json:"partialArgs"`
	// WillContinue says more parts of this call follow (Vertex streamed arguments).
	WillContinue bool `json:"willContinue"`
}

// hasArgs reports whether a part carries argument data.
func (fc *wireFunctionCall) hasArgs() bool {
	return (len(fc.Args) > 0 && !isNull(fc.Args)) || len(fc.PartialArgs) > 0
}

// wirePartialArg is one streamed argument value. The value fields are raw
// so that their presence, and values of an unexpected type, can be told.
type wirePartialArg struct {
	JSONPath     string          `json:"jsonPath"`
	StringValue  *string         `json:"stringValue"`
	NumberValue  json.RawMessage `json:"numberValue"`
	BoolValue    json.RawMessage `json:"boolValue"`
	NullValue    json.RawMessage `json:"nullValue"`
	WillContinue bool            `json:"willContinue"`
}

func isNull(v []byte) bool { return string(bytes.TrimSpace(v)) == "null" }

// describeError renders a Google API error object as "code status: message",
// falling back to the raw text for payloads of another shape.
func describeError(raw json.RawMessage) string {
	var e struct {
		Code    json.RawMessage `json:"code"`
		Status  string          `json:"status"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
		return clip(raw)
	}
	var head []string
	if c := strings.Trim(string(e.Code), `" `); c != "" && c != "null" {
		head = append(head, c)
	}
	if e.Status != "" {
		head = append(head, e.Status)
	}
	switch {
	case len(head) == 0 && e.Message == "":
		return clip(raw)
	case len(head) == 0:
		return e.Message
	case e.Message == "":
		return strings.Join(head, " ")
	}
	return strings.Join(head, " ") + ": " + e.Message
}

// describeTail renders non-SSE text found after the last event: a Google
// error body ({"error":{...}} or [{"error":{...}}]) as describeError does,
// anything else quoted.
func describeTail(text []byte, clipped bool) string {
	if !clipped {
		var obj struct {
			Error json.RawMessage `json:"error"`
		}
		var arr []struct {
			Error json.RawMessage `json:"error"`
		}
		switch {
		case json.Unmarshal(text, &obj) == nil && len(obj.Error) > 0 && !isNull(obj.Error):
			return describeError(obj.Error)
		case json.Unmarshal(text, &arr) == nil && len(arr) > 0 && len(arr[0].Error) > 0 && !isNull(arr[0].Error):
			return describeError(arr[0].Error)
		}
	}
	return clip(text)
}

// maxClip bounds the raw data quoted in a message.
const maxClip = 200

func clip(b []byte) string {
	if len(b) > maxClip {
		return fmt.Sprintf("%q...", b[:maxClip])
	}
	return fmt.Sprintf("%q", b)
}

// describeJSONError adds where a JSON error happened, which encoding/json
// keeps in the error value but leaves out of its message.
func describeJSONError(err error, what string) string {
	var (
		se *json.SyntaxError
		te *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("%v (after %d bytes of the %s)", err, se.Offset, what)
	case errors.As(err, &te):
		return fmt.Sprintf("%v (after %d bytes of the %s)", err, te.Offset, what)
	}
	return err.Error()
}
