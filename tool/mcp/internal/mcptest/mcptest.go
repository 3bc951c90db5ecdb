// Package mcptest is the MCP server the tests of package mcp talk to: over
// stdio as the testserver program, over streamable HTTP in process.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// LongDescription is the description of the tool "long.doc": more than
// 2,048 characters, many of them multi-byte.
var LongDescription = "Returns mixed content. " + strings.Repeat("Ünïcödé wörds ", 300)

// SearchHint is lookup's _meta search hint, whitespace not yet collapsed.
const SearchHint = "  find a\n\trecord   by its key "

// Options shape the server.
type Options struct {
	// WipeLog is the file each wipe call appends a line to.
	WipeLog string
	// PageSize is the tools/list page size (0: the SDK's default).
	PageSize int
	// Crash, when set, adds the tool "crash", which calls it after sleeping.
	Crash func()
}

type msInput struct {
	Key  string `json:"key"`
	Ms   int    `json:"ms"`
	Fail bool   `json:"fail"`
}

func parse(req *mcpsdk.CallToolRequest) (msInput, error) {
	var in msInput
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return in, err
		}
	}
	return in, nil
}

func sleep(ctx context.Context, ms int) error {
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func text(s string) *mcpsdk.CallToolResult {
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: s}}}
}

func yes() *bool { b := true; return &b }

const msSchema = `{"type":"object","properties":{"ms":{"type":"integer","minimum":0}}}`

// New builds the server.
func New(opts Options) *mcpsdk.Server {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "toolwire-testserver", Version: "1"}, &mcpsdk.ServerOptions{PageSize: opts.PageSize})
	var wipeMu sync.Mutex

	s.AddTool(&mcpsdk.Tool{
		Name:        "lookup",
		Description: "Looks a key up after sleeping ms milliseconds.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"},"ms":{"type":"integer","minimum":0}},"required":["key"]}`),
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, Title: "Lookup"},
		Meta:        mcpsdk.Meta{"anthropic/alwaysLoad": true, "anthropic/searchHint": SearchHint},
	}, func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		in, err := parse(req)
		if err != nil {
			return nil, err
		}
		if tok := req.Params.GetProgressToken(); tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcpsdk.ProgressNotificationParams{ProgressToken: tok, Message: "looking up " + in.Key, Progress: 1, Total: 2})
		}
		if err := sleep(ctx, in.Ms); err != nil {
			return nil, err
		}
		return text("lookup " + in.Key + ": found"), nil
	})

	s.AddTool(&mcpsdk.Tool{
		Name:        "charge",
		Description: "Says which idempotency key the request's _meta carried.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: yes()},
	}, func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		// The key under which toolwire sends it (tool.IdempotencyMeta).
		key, _ := req.Params.GetMeta()["dev.toolwire/idempotencyKey"].(string)
		return text("charged once for " + key), nil
	})

	s.AddTool(&mcpsdk.Tool{
		Name:        "wipe",
		Description: "Wipes everything after sleeping ms milliseconds.",
		InputSchema: json.RawMessage(msSchema),
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: yes()},
	}, func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		in, err := parse(req)
		if err != nil {
			return nil, err
		}
		if err := sleep(ctx, in.Ms); err != nil {
			return nil, err
		}
		wipeMu.Lock()
		defer wipeMu.Unlock()
		f, err := os.OpenFile(opts.WipeLog, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return &mcpsdk.CallToolResult{IsError: true, Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: err.Error()}}}, nil
		}
		defer f.Close()
		if _, err := fmt.Fprintf(f, "wipe %d\n", in.Ms); err != nil {
			return nil, err
		}
		return text("wiped"), nil
	})

	s.AddTool(&mcpsdk.Tool{
		Name:        "long.doc",
		Description: LongDescription,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"fail":{"type":"boolean"}}}`),
		Annotations: &mcpsdk.ToolAnnotations{OpenWorldHint: yes()},
		Meta:        mcpsdk.Meta{"anthropic/alwaysLoad": "true", "anthropic/searchHint": 42},
	}, func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		in, err := parse(req)
		if err != nil {
			return nil, err
		}
		return &mcpsdk.CallToolResult{IsError: in.Fail, Content: []mcpsdk.Content{
			&mcpsdk.TextContent{Text: "first"},
			&mcpsdk.ImageContent{MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}},
			&mcpsdk.AudioContent{MIMEType: "audio/wav", Data: []byte{1, 2}},
			&mcpsdk.ResourceLink{URI: "file:///tmp/linked.txt", Name: "linked"},
			&mcpsdk.EmbeddedResource{Resource: &mcpsdk.ResourceContents{URI: "file:///tmp/note.txt", MIMEType: "text/plain", Text: "note text"}},
			&mcpsdk.EmbeddedResource{Resource: &mcpsdk.ResourceContents{URI: "file:///tmp/data.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
			&mcpsdk.TextContent{Text: "last"},
		}}, nil
	})

	// Both hints at once: the careful one must win.
	s.AddTool(&mcpsdk.Tool{
		Name:        "confused",
		Description: "Claims to be read-only and destructive.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: yes()},
	}, func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		return &mcpsdk.CallToolResult{StructuredContent: map[string]any{"ok": true}}, nil
	})

	// A schema the router cannot compile: the tool must be left out.
	s.AddTool(&mcpsdk.Tool{
		Name:        "badschema",
		Description: "Has a broken input schema.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"nonsense"}}}`),
	}, func(context.Context, *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
		return text("unreachable"), nil
	})

	if opts.Crash != nil {
		s.AddTool(&mcpsdk.Tool{
			Name:        "crash",
			Description: "Kills the server after sleeping ms milliseconds.",
			InputSchema: json.RawMessage(msSchema),
		}, func(ctx context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			in, err := parse(req)
			if err != nil {
				return nil, err
			}
			if err := sleep(ctx, in.Ms); err != nil {
				return nil, err
			}
			opts.Crash()
			return text("still alive"), nil
		})
	}
	return s
}
