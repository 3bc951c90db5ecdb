// Package demo is `toolwire demo`: a recorded model stream with safe and
// unsafe calls mixed, a small project for it to work on, and a rendering of
// what happened — which call ran when, together or alone, and the results
// in the order the agent receives them.
package demo

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolwire/toolwire/internal/localrun"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool"
)

// Stream is the bundled Anthropic Messages stream (made by gen_stream.py):
// text, then six tool_use blocks — three read-only, one that writes, two
// read-only.
//
//go:embed stream.sse
var Stream []byte

// Pace is the pause between SSE events, about the speed a model streams.
const Pace = 15 * time.Millisecond

// Run is `toolwire demo`: it sets up the project in a temporary directory,
// replays Stream at Pace through a private pipeline of tools with
// executors workers, and renders to w what happened. The directory is
// removed when Run returns.
func Run(ctx context.Context, w io.Writer, tools *tool.Registry, executors int) error {
	dir, err := os.MkdirTemp("", "toolwire-demo-project-")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := Setup(dir); err != nil {
		return err
	}
	fmt.Fprintf(w, "toolwire demo: a recorded Anthropic stream with 6 tool calls, replayed at model speed\n")
	fmt.Fprintf(w, "through router → %d executor(s) → reorder on an embedded NATS JetStream server.\n", executors)
	fmt.Fprintf(w, "Working directory: %s\n\n", dir)
	rep, err := localrun.Run(ctx, localrun.Options{
		Format: "anthropic", Stream: Stream, Pace: Pace, WorkDir: dir, Tools: tools, Executors: executors,
	}, nil)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	Render(w, rep)
	return compareWaitForEnd(ctx, w, tools, executors, rep)
}

// Setup writes the small project the demo's calls work on into dir.
func Setup(dir string) error {
	files := map[string]string{
		"notes.txt": "toolwire demo notes\nTODO: wire the reorder stage\nthe agent gets results in call order\nTODO: scale out executors\n",
		"main.go":   "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello from the demo project\")\n}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	return nil
}

// timelineWidth is the number of columns of the timeline bars.
const timelineWidth = 48

// Render prints the timeline and the delivered results.
func Render(w io.Writer, rep *localrun.Report) {
	if len(rep.Results) == 0 {
		fmt.Fprintln(w, "no results")
		return
	}
	t0 := rep.Stream.StartedAt
	end := rep.Stream.EndedAt
	for _, r := range rep.Results {
		if r.FinishedAt.After(end) {
			end = r.FinishedAt
		}
	}
	span := end.Sub(t0)
	if span <= 0 {
		span = time.Millisecond
	}
	col := func(t time.Time) int {
		c := int(float64(t.Sub(t0)) / float64(span) * timelineWidth)
		return max(0, min(timelineWidth-1, c))
	}
	ms := func(t time.Time) string { return fmt.Sprintf("%6.0fms", float64(t.Sub(t0))/float64(time.Millisecond)) }

	fmt.Fprintf(w, "Timeline (0 = first byte of the model's stream; the stream ended at %s)\n\n", strings.TrimSpace(ms(rep.Stream.EndedAt)))
	fmt.Fprintf(w, "  %-3s %-44s %-6s %-7s %-7s\n", "seq", "call", "safe", "start", "end")
	for _, r := range rep.Results {
		bar := []byte(strings.Repeat(" ", timelineWidth))
		bar[col(rep.Stream.EndedAt)] = '|'
		for c := col(r.StartedAt); c <= col(r.FinishedAt); c++ {
			bar[c] = '#'
		}
		safe := "no"
		if r.Safe {
			safe = "yes"
		}
		fmt.Fprintf(w, "  %-3d %-44s %-4s %s %s [%s] %s\n", r.Seq, clip(label(rep, r), 44), safe, ms(r.StartedAt), ms(r.FinishedAt), bar, together(rep.Results, r))
	}
	fmt.Fprintf(w, "\n  '|' marks the end of the model's stream: calls left of it started while the model was still talking.\n")
	fmt.Fprintf(w, "  The first result was ready %s after the stream began.\n\n", strings.TrimSpace(ms(rep.Results[0].FinishedAt)))

	fmt.Fprintln(w, "Results, as the agent receives them (call order):")
	for i, r := range rep.Results {
		status := "ok"
		if r.IsError {
			status = "error"
		}
		fmt.Fprintf(w, "\n  [%d] %s %s — %s, worker %s, delivered at %s\n", r.Seq, r.Name, r.ToolUseID, status, r.Worker, strings.TrimSpace(ms(rep.Received[i])))
		for _, line := range strings.Split(strings.TrimRight(clip(r.Content, 600), "\n"), "\n") {
			fmt.Fprintf(w, "      %s\n", line)
		}
	}
	if rep.Done != nil {
		fmt.Fprintf(w, "\nturn_done: %d results, stop reason %q\n", rep.Done.Results, rep.Stream.StopReason)
	}
}

// label is the call as a person would name it, e.g. Bash(ls -la).
func label(rep *localrun.Report, r *schemas.ToolResult) string {
	if r.Seq >= len(rep.Stream.Uses) {
		return r.Name
	}
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
	}
	_ = json.Unmarshal(rep.Stream.Uses[r.Seq].Input, &in)
	arg := in.Command
	if arg == "" {
		arg = in.FilePath
	}
	return r.Name + "(" + arg + ")"
}

// together says whether a call overlapped any other.
func together(all []*schemas.ToolResult, r *schemas.ToolResult) string {
	var with []string
	for _, o := range all {
		if o != r && o.StartedAt.Before(r.FinishedAt) && r.StartedAt.Before(o.FinishedAt) {
			with = append(with, fmt.Sprint(o.Seq))
		}
	}
	if len(with) == 0 {
		return "alone"
	}
	return "with " + strings.Join(with, ",")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
