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

// A tool's predicates answer for one call's input, not for the tool: a
// query tool is safe to run beside other calls, and may run again after
// its worker died, only when the statement reads (a prefix check stands in
// for a real parser here). Input it cannot parse
// is reported as an error, which counts as false: the call then runs
// alone, and is not run a second time.
func Example_predicates() {
	reads := func(raw json.RawMessage) (bool, error) {
		var in struct {
			SQL string `json:"sql"`
		}
		if err := json.Unmarshal(raw, &in); err != nil {
			return false, err
		}
		return strings.HasPrefix(strings.ToUpper(strings.TrimSpace(in.SQL)), "SELECT "), nil
	}
	query := tool.MustBuild(tool.Definition{
		Name:        "Query",
		Description: "Runs one SQL statement.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"sql":{"type":"string"}},"required":["sql"]}`),
		Call: func(context.Context, json.RawMessage, tool.TurnContext, tool.Progress) (tool.Result, error) {
			return tool.Result{Content: "ok"}, nil
		},
		ConcurrencySafe: reads,
		ReadOnly:        reads,
	})
	for _, in := range []string{`{"sql":"select * from t"}`, `{"sql":"delete from t"}`, `not json`} {
		s := query.Safety(json.RawMessage(in))
		fmt.Printf("%-26s safe=%v read-only=%v failed=%v\n", in, s.ConcurrencySafe, s.ReadOnly, s.Err != nil)
	}
	// Output:
	// {"sql":"select * from t"}  safe=true read-only=true failed=false
	// {"sql":"delete from t"}    safe=false read-only=false failed=false
	// not json                   safe=false read-only=false failed=true
}

// A tool with a side effect hands its call's idempotency key to the
// service it acts on, which performs the effect once per key. The
// executor sets TurnContext.IdempotencyKey from the call's tenant, turn,
// tool_use id, tool and input, so every attempt of one call carries the
// same key (two spellings of the same arguments too), and any other call
// another.
func ExampleIdempotencyKey() {
	k1 := tool.IdempotencyKey("acme", "turn_1", "toolu_01", "Pay", json.RawMessage(`{"to":"bob","cents":500}`))
	k2 := tool.IdempotencyKey("acme", "turn_1", "toolu_01", "Pay", json.RawMessage(`{ "cents": 500, "to": "bob" }`))
	k3 := tool.IdempotencyKey("acme", "turn_1", "toolu_02", "Pay", json.RawMessage(`{"to":"bob","cents":500}`))
	fmt.Println(strings.HasPrefix(k1, "twk1_"), len(k1), k1 == k2, k1 == k3)

	// The payment service: it remembers the keys it has acted on.
	paid := map[string]bool{}
	pay := tool.MustBuild(tool.Definition{
		Name:        "Pay",
		Description: "Pays an amount in cents.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"},"cents":{"type":"integer"}},"required":["to","cents"]}`),
		Call: func(_ context.Context, _ json.RawMessage, tc tool.TurnContext, _ tool.Progress) (tool.Result, error) {
			if paid[tc.IdempotencyKey] {
				return tool.Result{Content: "already paid"}, nil
			}
			paid[tc.IdempotencyKey] = true
			return tool.Result{Content: "paid"}, nil
		},
	})
	for range 2 {
		res, _ := pay.Call(context.Background(), json.RawMessage(`{"to":"bob","cents":500}`), tool.TurnContext{IdempotencyKey: k1}, nil)
		fmt.Println(res.Content)
	}
	// Output:
	// true 37 true false
	// paid
	// already paid
}
