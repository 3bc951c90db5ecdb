package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// globEpoch is the modification time the Glob fixtures count from.
var globEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// globTree writes the files, each with its modification time in seconds
// after globEpoch.
func globTree(t *testing.T, root string, files map[string]int) {
	t.Helper()
	for name, age := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, name+"\n")
		mt := globEpoch.Add(time.Duration(age) * time.Second)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}

// newGlobFixture is a file fixture with a small tree in its root.
func newGlobFixture(t *testing.T) fileFixture {
	t.Helper()
	f := newFileFixture(t)
	globTree(t, f.root, map[string]int{
		".hidden.go":         0,
		"a.go":               1,
		"b.txt":              2,
		"sub/c.go":           3,
		"sub/deep/d.go":      4,
		"sub/deep/e_test.go": 4, // a tie with d.go: path order
		".git/x.go":          9,
	})
	return f
}

func lines(s ...string) string { return strings.Join(s, "\n") }

func TestGlobPatterns(t *testing.T) {
	t.Parallel()
	f := newGlobFixture(t)
	cases := []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"pattern": "**/*.go"}, lines("sub/deep/d.go", "sub/deep/e_test.go", "sub/c.go", "a.go", ".hidden.go")},
		{map[string]any{"pattern": "*.go"}, lines("a.go", ".hidden.go")},
		{map[string]any{"pattern": "sub/*.go"}, "sub/c.go"},
		{map[string]any{"pattern": "sub/**/*.go"}, lines("sub/deep/d.go", "sub/deep/e_test.go", "sub/c.go")},
		{map[string]any{"pattern": "**/deep/*.go"}, lines("sub/deep/d.go", "sub/deep/e_test.go")},
		{map[string]any{"pattern": "**/*_test.go"}, "sub/deep/e_test.go"},
		{map[string]any{"pattern": "**/*.{go,txt}"}, lines("sub/deep/d.go", "sub/deep/e_test.go", "sub/c.go", "b.txt", "a.go", ".hidden.go")},
		{map[string]any{"pattern": "**"}, lines("sub/deep/d.go", "sub/deep/e_test.go", "sub/c.go", "b.txt", "a.go", ".hidden.go")},
		{map[string]any{"pattern": "./*.txt"}, "b.txt"},
		{map[string]any{"pattern": "sub/deep/d.go"}, "sub/deep/d.go"},
		{map[string]any{"pattern": "*.go", "path": "sub"}, "sub/c.go"},
		{map[string]any{"pattern": "**/*.go", "path": "sub"}, lines("sub/deep/d.go", "sub/deep/e_test.go", "sub/c.go")},
		{map[string]any{"pattern": "*.go", "path": filepath.Join(f.root, "sub", "deep")}, lines("sub/deep/d.go", "sub/deep/e_test.go")},
		{map[string]any{"pattern": "../*.go", "path": "sub"}, lines("a.go", ".hidden.go")},
		{map[string]any{"pattern": filepath.Join(f.root, "sub", "*.go")}, "sub/c.go"},
		{map[string]any{"pattern": ".git/*"}, ".git/x.go"},
		{map[string]any{"pattern": "nomatch*"}, "No files found"},
		{map[string]any{"pattern": "missing/**/*.go"}, "No files found"},
		{map[string]any{"pattern": "a.go/*"}, "No files found"},
	}
	for _, tc := range cases {
		res := f.call(t, Glob(), tc.input)
		if res.IsError || res.Content != tc.want {
			t.Errorf("%v: got error %v\n%s\nwant\n%s", tc.input, res.IsError, res.Content, tc.want)
		}
	}
}

func TestGlobSymlinks(t *testing.T) {
	t.Parallel()
	f := newFileFixture(t)
	globTree(t, f.root, map[string]int{"a.go": 1, "sub/b.go": 2})
	mustSymlink(t, "a.go", filepath.Join(f.root, "alias.go"))
	mustSymlink(t, filepath.Join(f.root, "a.go"), filepath.Join(f.root, "abs-alias.go"))
	mustSymlink(t, "sub", filepath.Join(f.root, "subalias"))
	mustSymlink(t, "missing.go", filepath.Join(f.root, "dangling.go"))
	mustSymlink(t, filepath.Join(f.outside, "secret.txt"), filepath.Join(f.root, "sub", "out.go"))
	writeFile(t, filepath.Join(f.outside, "x.go"), "outside\n")

	// Symlinks to files inside the root are listed (with their target's
	// time); links that dangle or lead out, and whatever lies behind a
	// symlinked directory, are not.
	res := f.call(t, Glob(), map[string]any{"pattern": "**/*"})
	want := lines("sub/b.go", "a.go", "abs-alias.go", "alias.go")
	if res.IsError || res.Content != want {
		t.Errorf("**/*: got %+v, want\n%s", res, want)
	}
	if strings.Contains(res.Content, "secret") || strings.Contains(res.Content, "out") {
		t.Errorf("results name outside files: %s", res.Content)
	}
	// A symlinked directory inside the root can be searched by name.
	res = f.call(t, Glob(), map[string]any{"pattern": "*.go", "path": "subalias"})
	if res.IsError || res.Content != "sub/b.go" {
		t.Errorf("path subalias: got %+v", res)
	}
}

func TestGlobDeniesEscapes(t *testing.T) {
	t.Parallel()
	f := newGlobFixture(t)
	writeFile(t, filepath.Join(f.outside, "x.go"), "outside\n")
	for _, input := range []map[string]any{
		{"pattern": "../*"},
		{"pattern": "../**/*.go"},
		{"pattern": "../outside/*.go"},
		{"pattern": "sub/../../outside/*"},
		{"pattern": filepath.Join(f.outside, "*.go")},
		{"pattern": "/etc/*"},
		{"pattern": "dir-out/*"},
		{"pattern": "dir-out/**/*.go"},
		{"pattern": "*", "path": ".."},
		{"pattern": "*", "path": f.outside},
		{"pattern": "*", "path": "dir-out"},
		{"pattern": "**/*", "path": "/"},
		{"pattern": "../../*", "path": "sub"},
	} {
		res := f.call(t, Glob(), input)
		if !res.IsError || !strings.Contains(res.Content, "Access denied") {
			t.Errorf("%v: got %+v, want access denied", input, res)
		}
	}
}

func TestGlobErrors(t *testing.T) {
	t.Parallel()
	f := newGlobFixture(t)
	cases := []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"pattern": ""}, "pattern is empty"},
		{map[string]any{"pattern": "[a"}, "invalid glob pattern"},
		{map[string]any{"pattern": "*.go", "path": "missing"}, "Directory does not exist: missing"},
		{map[string]any{"pattern": "*.go", "path": "a.go"}, "a.go is not a directory"},
	}
	for _, tc := range cases {
		res := f.call(t, Glob(), tc.input)
		if !res.IsError || !strings.Contains(res.Content, tc.want) {
			t.Errorf("%v: got %+v, want an error containing %q", tc.input, res, tc.want)
		}
	}
}

func TestGlobTruncates(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]int{}
	for i := range GlobMaxResults + 3 {
		files[fmt.Sprintf("d%d/f%04d.txt", i%7, i)] = i
	}
	globTree(t, root, files)
	res := callIn(t, Glob(), root, map[string]any{"pattern": "**/*.txt"})
	got := strings.Split(res.Content, "\n")
	if res.IsError || len(got) != GlobMaxResults+1 {
		t.Fatalf("got error %v and %d lines", res.IsError, len(got))
	}
	last := GlobMaxResults + 2
	if got[0] != fmt.Sprintf("d%d/f%04d.txt", last%7, last) || got[GlobMaxResults-1] != "d3/f0003.txt" {
		t.Errorf("first %q, last %q: want the newest first", got[0], got[GlobMaxResults-1])
	}
	if want := fmt.Sprintf("(Results are truncated: showing the %d most recently modified of %d files.", GlobMaxResults, GlobMaxResults+3); !strings.HasPrefix(got[GlobMaxResults], want) {
		t.Errorf("note %q, want it to start %q", got[GlobMaxResults], want)
	}
}

// TestGlobWalkKeepsNewest checks the bounded collection on its own: with a
// small limit the trimming runs many times and must keep the newest.
func TestGlobWalkKeepsNewest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]int{}
	for i := range 50 {
		files[fmt.Sprintf("f%02d", (i*17)%50)] = (i * 17) % 50
	}
	globTree(t, dir, files)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	pat, _ := compileGlob("*", false)
	matches, total, err := globWalk(context.Background(), root, ".", pat, 3)
	if err != nil || total != 50 || len(matches) != 3 {
		t.Fatalf("got %v, %d, %v", matches, total, err)
	}
	for i, want := range []string{"f49", "f48", "f47"} {
		if matches[i].path != want {
			t.Errorf("matches[%d] = %s, want %s", i, matches[i].path, want)
		}
	}
}
