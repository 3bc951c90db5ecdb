package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const grepMain = `package main

import "fmt"

func main() {
	fmt.Println("hello")
	fmt.Println("world")
}

func helper() {
	fmt.Println("HELLO again")
}
`

// newGrepFixture is a file fixture with sources, a text file, a binary
// file and a .git directory that all contain "hello".
func newGrepFixture(t *testing.T) fileFixture {
	t.Helper()
	f := newFileFixture(t)
	writeFile(t, filepath.Join(f.root, "a.go"), grepMain)
	writeFile(t, filepath.Join(f.root, "sub", "b.go"), "package sub\n\nfunc B() string { return \"hello\" }\n")
	writeFile(t, filepath.Join(f.root, "notes.txt"), "hello notes\nnothing\n")
	writeFile(t, filepath.Join(f.root, "bin.dat"), "hello\x00binary\n")
	if err := os.MkdirAll(filepath.Join(f.root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.root, ".git", "config"), "hello git\n")
	return f
}

func TestGrepModes(t *testing.T) {
	t.Parallel()
	f := newGrepFixture(t)
	cases := []struct {
		input map[string]any
		want  string
	}{
		// files_with_matches is the default; .git and binary files are skipped.
		{map[string]any{"pattern": "hello"}, lines("a.go", "notes.txt", "sub/b.go")},
		{map[string]any{"pattern": "hel+o", "output_mode": "files_with_matches"}, lines("a.go", "notes.txt", "sub/b.go")},
		{map[string]any{"pattern": "HELLO"}, "a.go"},
		{map[string]any{"pattern": "HELLO", "-i": true}, lines("a.go", "notes.txt", "sub/b.go")},
		{map[string]any{"pattern": "hello", "output_mode": "count"}, lines("a.go:1", "notes.txt:1", "sub/b.go:1")},
		{map[string]any{"pattern": "hello", "output_mode": "count", "-i": true}, lines("a.go:2", "notes.txt:1", "sub/b.go:1")},
		{map[string]any{"pattern": `Println\("`, "output_mode": "content"}, lines(
			`a.go:6:	fmt.Println("hello")`,
			`a.go:7:	fmt.Println("world")`,
			`a.go:11:	fmt.Println("HELLO again")`)},
		{map[string]any{"pattern": "^func", "output_mode": "content", "-n": false}, lines(
			"a.go:func main() {",
			"a.go:func helper() {",
			`sub/b.go:func B() string { return "hello" }`)},
		// Context: - marks context lines, -- separates groups, across files too.
		{map[string]any{"pattern": "hello", "output_mode": "content", "-i": true, "-C": 1}, lines(
			"a.go-5-func main() {",
			`a.go:6:	fmt.Println("hello")`,
			`a.go-7-	fmt.Println("world")`,
			"--",
			"a.go-10-func helper() {",
			`a.go:11:	fmt.Println("HELLO again")`,
			"a.go-12-}",
			"--",
			"notes.txt:1:hello notes",
			"notes.txt-2-nothing",
			"--",
			"sub/b.go-2-",
			`sub/b.go:3:func B() string { return "hello" }`)},
		{map[string]any{"pattern": "nothing|world", "output_mode": "content", "-B": 2, "-n": false}, lines(
			"a.go-func main() {",
			`a.go-	fmt.Println("hello")`,
			`a.go:	fmt.Println("world")`,
			"--",
			"notes.txt-hello notes",
			"notes.txt:nothing")},
		// -A and -B win over -C.
		{map[string]any{"pattern": "world", "output_mode": "content", "-C": 3, "-A": 0, "-B": 1}, lines(
			`a.go-6-	fmt.Println("hello")`,
			`a.go:7:	fmt.Println("world")`)},
		// Context lines of neighbouring matches merge into one group.
		{map[string]any{"pattern": "Println", "path": "a.go", "output_mode": "content", "-A": 1}, lines(
			`6:	fmt.Println("hello")`,
			`7:	fmt.Println("world")`,
			"8-}",
			"--",
			`11:	fmt.Println("HELLO again")`,
			"12-}")},
		// A single file is shown without its name, as ripgrep does.
		{map[string]any{"pattern": "hello", "path": "notes.txt", "output_mode": "content"}, "1:hello notes"},
		{map[string]any{"pattern": "hello", "path": "notes.txt", "output_mode": "count"}, "1"},
		{map[string]any{"pattern": "hello", "path": "notes.txt"}, "notes.txt"},
		{map[string]any{"pattern": "hello", "path": filepath.Join(f.root, "sub")}, "sub/b.go"},
		{map[string]any{"pattern": "hello", "path": "sub/../notes.txt", "glob": "*.go"}, "notes.txt"},
		{map[string]any{"pattern": "no such text"}, "No matches found"},
		{map[string]any{"pattern": "no such text", "output_mode": "count"}, "No matches found"},
		{map[string]any{"pattern": "no such text", "output_mode": "content", "-C": 2}, "No matches found"},
		{map[string]any{"pattern": "hello", "path": "bin.dat"}, "No matches found"},
		{map[string]any{"pattern": "hello", "path": ".git"}, ".git/config"},
	}
	for _, tc := range cases {
		res := f.call(t, Grep(), tc.input)
		if res.IsError || res.Content != tc.want {
			t.Errorf("%v: got error %v\n%s\nwant\n%s", tc.input, res.IsError, res.Content, tc.want)
		}
	}
}

func TestGrepGlobFilter(t *testing.T) {
	t.Parallel()
	f := newGrepFixture(t)
	if err := os.MkdirAll(filepath.Join(f.root, "sub", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.root, "sub", "deep", "c.ts"), "hello ts\n")
	cases := map[string]string{
		"*.go":          lines("a.go", "sub/b.go"),
		"**/*.go":       lines("a.go", "sub/b.go"),
		"sub/*.go":      "sub/b.go",
		"sub/**":        lines("sub/b.go", "sub/deep/c.ts"),
		"*.{go,txt}":    lines("a.go", "notes.txt", "sub/b.go"),
		"*.ts":          "sub/deep/c.ts",
		"!*.go":         lines("notes.txt", "sub/deep/c.ts"),
		"!sub":          lines("a.go", "notes.txt"),
		"!{*.txt,deep}": lines("a.go", "sub/b.go"),
		"*.md":          "No matches found",
	}
	for glob, want := range cases {
		res := f.call(t, Grep(), map[string]any{"pattern": "hello", "glob": glob})
		if res.IsError || res.Content != want {
			t.Errorf("glob %q: got error %v\n%s\nwant\n%s", glob, res.IsError, res.Content, want)
		}
	}
	res := f.call(t, Grep(), map[string]any{"pattern": "hello", "glob": "*.go", "path": "sub"})
	if res.IsError || res.Content != "sub/b.go" {
		t.Errorf("glob under path: got %+v", res)
	}
}

func TestGrepHeadLimit(t *testing.T) {
	t.Parallel()
	f := newGrepFixture(t)
	cases := []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"pattern": "hello", "head_limit": 1}, lines("a.go", "[head_limit 1 reached; more results not shown]")},
		{map[string]any{"pattern": "hello", "head_limit": 3}, lines("a.go", "notes.txt", "sub/b.go")},
		{map[string]any{"pattern": "hello", "head_limit": 0}, lines("a.go", "notes.txt", "sub/b.go")},
		{map[string]any{"pattern": "hello", "output_mode": "count", "head_limit": 2}, lines("a.go:1", "notes.txt:1", "[head_limit 2 reached; more results not shown]")},
		{map[string]any{"pattern": "Println", "output_mode": "content", "head_limit": 2}, lines(
			`a.go:6:	fmt.Println("hello")`,
			`a.go:7:	fmt.Println("world")`,
			"[head_limit 2 reached; more results not shown]")},
		// Context lines and separators count as output lines, as with | head.
		{map[string]any{"pattern": "hello", "-i": true, "output_mode": "content", "-A": 1, "head_limit": 3}, lines(
			`a.go:6:	fmt.Println("hello")`,
			`a.go-7-	fmt.Println("world")`,
			"--",
			"[head_limit 3 reached; more results not shown]")},
	}
	for _, tc := range cases {
		res := f.call(t, Grep(), tc.input)
		if res.IsError || res.Content != tc.want {
			t.Errorf("%v: got error %v\n%s\nwant\n%s", tc.input, res.IsError, res.Content, tc.want)
		}
	}
}

func TestGrepLineShapes(t *testing.T) {
	t.Parallel()
	f := newFileFixture(t)
	writeFile(t, filepath.Join(f.root, "crlf.txt"), "hello crlf\r\nbye\r\n")
	writeFile(t, filepath.Join(f.root, "long.txt"), strings.Repeat("x", 3000)+"needle\nshort needle")
	writeFile(t, filepath.Join(f.root, "latin1.txt"), "caf\xe9 needle\n")
	cases := []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"pattern": "bye$", "path": "crlf.txt", "output_mode": "content"}, "2:bye"},
		{map[string]any{"pattern": "needle", "path": "long.txt", "output_mode": "content"}, lines(
			"1:"+strings.Repeat("x", GrepMaxLineChars)+"... [line truncated]",
			"2:short needle")},
		{map[string]any{"pattern": "needle", "path": "latin1.txt", "output_mode": "content"}, "1:caf\uFFFD needle"},
	}
	for _, tc := range cases {
		res := f.call(t, Grep(), tc.input)
		if res.IsError || res.Content != tc.want {
			t.Errorf("%v: got error %v\n%.200q\nwant\n%.200q", tc.input, res.IsError, res.Content, tc.want)
		}
	}
}

func TestGrepSymlinks(t *testing.T) {
	t.Parallel()
	f := newGrepFixture(t)
	mustSymlink(t, "notes.txt", filepath.Join(f.root, "alias.txt"))
	mustSymlink(t, filepath.Join(f.root, "sub"), filepath.Join(f.root, "subalias"))
	writeFile(t, filepath.Join(f.outside, "more.txt"), "top secret too\n")

	// The links that lead out (link-out, rel-out, dir-out) are never
	// searched; a symlinked file inside the root is, a symlinked
	// directory is not walked.
	for _, mode := range []string{"files_with_matches", "content", "count"} {
		res := f.call(t, Grep(), map[string]any{"pattern": "secret", "output_mode": mode})
		if res.IsError || res.Content != "No matches found" {
			t.Errorf("%s: got %+v, want no matches", mode, res)
		}
	}
	res := f.call(t, Grep(), map[string]any{"pattern": "hello notes"})
	if res.IsError || res.Content != lines("alias.txt", "notes.txt") {
		t.Errorf("through alias: got %+v", res)
	}
	res = f.call(t, Grep(), map[string]any{"pattern": "hello", "path": "subalias"})
	if res.IsError || res.Content != "sub/b.go" {
		t.Errorf("path subalias: got %+v", res)
	}
}

func TestGrepDeniesEscapes(t *testing.T) {
	t.Parallel()
	f := newGrepFixture(t)
	for _, p := range append(f.escapes(), "..", "../outside", f.outside, "dir-out", "/", "sub/../..") {
		res := f.call(t, Grep(), map[string]any{"pattern": "secret", "path": p, "output_mode": "content"})
		if !res.IsError || !strings.Contains(res.Content, "Access denied") || strings.Contains(res.Content, "top secret") {
			t.Errorf("%s: got %+v, want access denied", p, res)
		}
	}
}

func TestGrepErrors(t *testing.T) {
	t.Parallel()
	f := newGrepFixture(t)
	cases := []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"pattern": ""}, "pattern is empty"},
		{map[string]any{"pattern": "func("}, "Invalid regular expression: error parsing regexp: missing closing )"},
		{map[string]any{"pattern": "a", "output_mode": "lines"}, `output_mode must be "content", "files_with_matches" or "count"`},
		{map[string]any{"pattern": "a", "glob": "[a"}, "invalid glob pattern"},
		{map[string]any{"pattern": "a", "path": "missing"}, "Path does not exist: missing"},
	}
	for _, tc := range cases {
		res := f.call(t, Grep(), tc.input)
		if !res.IsError || !strings.Contains(res.Content, tc.want) {
			t.Errorf("%v: got %+v, want an error containing %q", tc.input, res, tc.want)
		}
	}
}
