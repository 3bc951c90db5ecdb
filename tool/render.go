package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Format is a provider's format of the request's tools list.
type Format string

// The formats Render knows.
const (
	// FormatAnthropic is the Messages API's tools:
	// {"name","description","input_schema"[,"defer_loading":true]}.
	FormatAnthropic Format = "anthropic"
	// FormatOpenAI is the Chat Completions API's tools:
	// {"type":"function","function":{"name","description","parameters"[,"strict":true]}}.
	FormatOpenAI Format = "openai"
)

// ParseFormat accepts "anthropic" or "openai".
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case FormatAnthropic, FormatOpenAI:
		return f, nil
	}
	return "", fmt.Errorf("unknown tools format %q: want %q or %q", s, FormatAnthropic, FormatOpenAI)
}

// Entry is one tool as a request lists it.
type Entry struct {
	Tool *Tool
	// DeferLoading marks a deferred tool the model has found through
	// ToolSearch: it is listed with "defer_loading": true (Anthropic).
	DeferLoading bool
}

// Entries lists tools as they are, none deferred.
func Entries(tools []*Tool) []Entry {
	out := make([]Entry, len(tools))
	for i, t := range tools {
		out[i] = Entry{Tool: t}
	}
	return out
}

type anthropicTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	DeferLoading bool            `json:"defer_loading,omitempty"`
}

type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict,omitempty"`
}

// Render is the request's tools list in format f: a JSON array, indented by
// two spaces, keys in a fixed order, schemas with their authors' key order
// and no HTML escaping, ending in a newline. The same entries give the same
// bytes; a tool's description is its ModelDescription.
func Render(f Format, entries []Entry) ([]byte, error) {
	items := make([]any, len(entries))
	for i, e := range entries {
		v, err := render(f, e)
		if err != nil {
			return nil, err
		}
		items[i] = v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(items); err != nil {
		return nil, fmt.Errorf("render tools: %w", err)
	}
	return b.Bytes(), nil
}

// RenderOne is one entry in format f, as compact JSON.
func RenderOne(f Format, e Entry) ([]byte, error) {
	v, err := render(f, e)
	if err != nil {
		return nil, err
	}
	return marshalCompact(v)
}

func render(f Format, e Entry) (any, error) {
	t := e.Tool
	switch f {
	case FormatAnthropic:
		return anthropicTool{Name: t.Name(), Description: t.ModelDescription(), InputSchema: t.InputSchema(), DeferLoading: e.DeferLoading}, nil
	case FormatOpenAI:
		return openAITool{Type: "function", Function: openAIFunction{
			Name: t.Name(), Description: t.ModelDescription(), Parameters: t.InputSchema(), Strict: t.Strict(),
		}}, nil
	}
	return nil, fmt.Errorf("render tools: unknown format %q", f)
}

// marshalCompact is json.Marshal without HTML escaping or a newline.
func marshalCompact(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
