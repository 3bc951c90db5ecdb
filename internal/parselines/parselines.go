// Package parselines is what `toolwire parse` prints: each tool call of a
// model's response stream as one JSON line the moment the parser reports
// it, then one line for the stream's end. Lines are written as they are
// known, never batched, so that a script reading them sees a call when the
// pipeline would.
package parselines

import (
	"context"
	"encoding/json"
	"io"

	"github.com/toolwire/toolwire/modelstream"
)

// CallLine is one call: its input only when it completed, else the
// reason it did not.
type CallLine struct {
	Seq      int             `json:"seq"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input,omitempty"`
	Complete bool            `json:"complete"`
	Error    string          `json:"error,omitempty"`
	// At is the byte offset just past the event that completed the call.
	At int64 `json:"at"`
}

// EndLine is the last line: how the stream ended, and what was skipped
// without failing it (Warnings, the first described in Warning).
type EndLine struct {
	End        bool    `json:"end"`
	Calls      int     `json:"calls"`
	StopReason string  `json:"stop_reason"`
	Error      *string `json:"error"`
	Warnings   int     `json:"warnings"`
	Warning    string  `json:"warning,omitempty"`
}

// Print parses in with parser and writes a CallLine to w for each call as
// it is reported, then the EndLine. at maps a reported offset to the one
// printed (nil: unchanged), for a stream read through a decoder such as
// chunks.Reader. failure is the end's error, "" when the stream ended
// well: every line is printed all the same. err is a failure to parse or
// to write.
func Print(ctx context.Context, w io.Writer, parser modelstream.Parser, in io.Reader, at func(int64) int64) (failure string, err error) {
	if at == nil {
		at = func(off int64) int64 { return off }
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // tool input is full of <, > and &
	h := modelstream.HandlerFuncs{
		OnCall: func(_ context.Context, c modelstream.Call) error {
			line := CallLine{Seq: c.Seq, ID: c.ID, Name: c.Name, Complete: c.Complete, Error: c.Err, At: at(c.At)}
			if c.Complete {
				line.Input = c.Input
			}
			return enc.Encode(line)
		},
		OnEnd: func(_ context.Context, e modelstream.End) error {
			line := EndLine{End: true, Calls: e.Calls, StopReason: e.StopReason, Warnings: e.Warnings, Warning: e.Warning}
			if e.Err != "" {
				line.Error, failure = &e.Err, e.Err
			}
			return enc.Encode(line)
		},
	}
	if err := parser.Parse(ctx, in, h); err != nil {
		return failure, err
	}
	return failure, nil
}
