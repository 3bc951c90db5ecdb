package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
)

// The built-in tools, sorted by name, and how Bash classifies two calls: a
// read-only command may run beside other calls, one that changes files
// runs alone.
func Example() {
	for _, t := range builtin.Tools() {
		fmt.Println(t.Name())
	}
	bash := builtin.Bash()
	for _, cmd := range []string{`{"command":"git status && ls -la"}`, `{"command":"rm -rf build"}`} {
		s := bash.Safety(json.RawMessage(cmd))
		fmt.Printf("%s safe=%v read-only=%v destructive=%v\n", bash.Activity(json.RawMessage(cmd)), s.ConcurrencySafe, s.ReadOnly, s.Destructive)
	}
	// Output:
	// Bash
	// Edit
	// EnterPlanMode
	// ExitPlanMode
	// Glob
	// Grep
	// Read
	// Write
	// Bash(git status && ls -la) safe=true read-only=true destructive=false
	// Bash(rm -rf build) safe=false read-only=false destructive=true
}

// File tools are confined to the turn's working directory: a path that
// leaves it is answered with an error result for the model, never read.
func ExampleRead() {
	dir, err := os.MkdirTemp("", "builtin-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("first\nsecond\n"), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	read := builtin.Read()
	tc := tool.TurnContext{WorkDir: dir}
	for _, in := range []string{`{"file_path":"notes.txt"}`, `{"file_path":"/etc/passwd"}`} {
		res, err := read.Call(context.Background(), json.RawMessage(in), tc, nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("is_error=%v %q\n", res.IsError, strings.ReplaceAll(res.Content, dir, "$DIR"))
	}
	// Output:
	// is_error=false "     1\tfirst\n     2\tsecond"
	// is_error=true "Access denied: path is outside the working directory: /etc/passwd resolves to /etc/passwd, outside $DIR"
}
