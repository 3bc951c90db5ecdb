package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/toolwire/toolwire/tool"
)

// A user-defined tool: WordCount counts the words of a text, or of a file
// inside the turn's working directory. Only what differs from the
// fail-closed defaults is written: reading a text is safe to run beside
// other calls and read-only; the rest (not destructive, allowed, user-facing
// name WordCount, 100,000-character cap) comes from Build.
func Example() {
	type input struct {
		Text     string `json:"text"`
		FilePath string `json:"file_path"`
	}
	wc := tool.MustBuild(tool.Definition{
		Name:        "WordCount",
		SearchHint:  "count words in text or a file",
		Description: "Counts the words of text, or of the file at file_path.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"file_path":{"type":"string"}}}`),
		Call: func(_ context.Context, raw json.RawMessage, tc tool.TurnContext, _ tool.Progress) (tool.Result, error) {
			var in input
			if err := json.Unmarshal(raw, &in); err != nil {
				return tool.Result{Content: err.Error(), IsError: true}, nil
			}
			text := in.Text
			if in.FilePath != "" {
				b, err := os.ReadFile(in.FilePath) // a real tool confines the path to tc.WorkDir
				if err != nil {
					return tool.Result{Content: err.Error(), IsError: true}, nil
				}
				text = string(b)
			}
			return tool.Result{Content: fmt.Sprint(len(strings.Fields(text)))}, nil
		},
		ValidateInput: func(_ context.Context, raw json.RawMessage, _ tool.TurnContext) error {
			var in input
			if err := json.Unmarshal(raw, &in); err != nil || (in.Text == "") == (in.FilePath == "") {
				return fmt.Errorf("give exactly one of text and file_path")
			}
			return nil
		},
		ConcurrencySafe: tool.Always,
		ReadOnly:        tool.Always,
		Path: func(raw json.RawMessage) string {
			var in input
			_ = json.Unmarshal(raw, &in)
			return in.FilePath
		},
	})

	in := json.RawMessage(`{"text":"the quick brown fox"}`)
	fmt.Println("valid:", wc.ValidateInput(context.Background(), in, tool.TurnContext{}) == nil)
	s := wc.Safety(in)
	fmt.Println("safe:", s.ConcurrencySafe, "read-only:", s.ReadOnly, "destructive:", s.Destructive)
	fmt.Println("permission:", wc.CheckPermission(in, tool.PermissionContext{}).Behavior)
	res, _ := wc.Call(context.Background(), in, tool.TurnContext{}, nil)
	fmt.Println(wc.Activity(json.RawMessage(`{"file_path":"notes.txt"}`)), "→", res.Content)

	rendered, _ := tool.Render(tool.FormatAnthropic, tool.Entries([]*tool.Tool{wc}))
	fmt.Print(string(rendered))
	// Output:
	// valid: true
	// safe: true read-only: true destructive: false
	// permission: allow
	// WordCount(notes.txt) → 4
	// [
	//   {
	//     "name": "WordCount",
	//     "description": "Counts the words of text, or of the file at file_path.",
	//     "input_schema": {
	//       "type": "object",
	//       "properties": {
	//         "text": {
	//           "type": "string"
	//         },
	//         "file_path": {
	//           "type": "string"
	//         }
	//       }
	//     }
	//   }
	// ]
}
