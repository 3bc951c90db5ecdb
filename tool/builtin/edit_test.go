package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const editSource = "package main\n\nfunc a() {}\nfunc b() {}\n\n// x is x, x.\n"

func TestEditReplacesUniqueString(t *testing.T) {
	t.Parallel()
	f := newFileFixture(t)
	p := filepath.Join(f.root, "sub", "f.go")
	writeFile(t, p, editSource)
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	res := f.call(t, Edit(), map[string]any{"file_path": "sub/f.go", "old_string": "func a() {}", "new_string": "func a() {\n\treturn\n}"})
	if res.IsError || res.Content != "Replaced 1 occurrence in sub/f.go" {
		t.Fatalf("got %+v", res)
	}
	want := strings.Replace(editSource, "func a() {}", "func a() {\n\treturn\n}", 1)
	if got := readText(t, p); got != want {
		t.Errorf("f.go = %q, want %q", got, want)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("mode after edit: %v, %v; want 0640", st.Mode(), err)
	}
	assertNoTempFiles(t, filepath.Dir(p))

	// Deleting text: new_string may be empty.
	res = f.call(t, Edit(), map[string]any{"file_path": p, "old_string": "func b() {}\n", "new_string": ""})
	if res.IsError || !strings.HasPrefix(res.Content, "Replaced 1 occurrence") || strings.Contains(readText(t, p), "func b") {
		t.Errorf("deleting: got %+v, file %q", res, readText(t, p))
	}
}

func TestEditReplaceAll(t *testing.T) {
	t.Parallel()
	f := newFileFixture(t)
	p := filepath.Join(f.root, "f.go")
	writeFile(t, p, editSource)
	res := f.call(t, Edit(), map[string]any{"file_path": "f.go", "old_string": "x", "new_string": "y", "replace_all": true})
	if res.IsError || res.Content != "Replaced 3 occurrences in f.go" {
		t.Fatalf("got %+v", res)
	}
	if got, want := readText(t, p), strings.ReplaceAll(editSource, "x", "y"); got != want {
		t.Errorf("f.go = %q, want %q", got, want)
	}
	// replace_all with a single occurrence is fine too.
	res = f.call(t, Edit(), map[string]any{"file_path": "f.go", "old_string": "package main", "new_string": "package lib", "replace_all": true})
	if res.IsError || res.Content != "Replaced 1 occurrence in f.go" {
		t.Fatalf("got %+v", res)
	}
	assertNoTempFiles(t, f.root)
}

func TestEditErrors(t *testing.T) {
	t.Parallel()
	f := newFileFixture(t)
	p := filepath.Join(f.root, "f.go")
	writeFile(t, p, editSource)
	writeFile(t, filepath.Join(f.root, "bin.dat"), "ELF\x00func a() {}")
	mustSymlink(t, "missing.go", filepath.Join(f.root, "dangling.go"))
	cases := []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"file_path": "f.go", "old_string": "func c() {}", "new_string": "x"}, "old_string not found in f.go"},
		{map[string]any{"file_path": "f.go", "old_string": "x", "new_string": "y"}, "old_string appears 3 times in f.go; give more context or set replace_all"},
		{map[string]any{"file_path": "f.go", "old_string": "func", "new_string": "fn", "replace_all": false}, "old_string appears 2 times in f.go; give more context or set replace_all"},
		{map[string]any{"file_path": "f.go", "old_string": "func a() {}", "new_string": "func a() {}"}, "old_string and new_string are the same"},
		{map[string]any{"file_path": "missing.go", "old_string": "a", "new_string": "b"}, "File does not exist: missing.go"},
		{map[string]any{"file_path": "sub/missing.go", "old_string": "a", "new_string": "b"}, "File does not exist: sub/missing.go"},
		{map[string]any{"file_path": "dangling.go", "old_string": "a", "new_string": "b"}, "File does not exist: dangling.go"},
		{map[string]any{"file_path": "f.go", "old_string": "", "new_string": "b"}, "old_string is empty"},
		{map[string]any{"file_path": "", "old_string": "a", "new_string": "b"}, "file_path is empty"},
		{map[string]any{"file_path": "sub", "old_string": "a", "new_string": "b"}, "sub is a directory"},
		{map[string]any{"file_path": "bin.dat", "old_string": "func", "new_string": "fn"}, "bin.dat appears to be a binary file"},
		{map[string]any{"file_path": "f.go/child", "old_string": "a", "new_string": "b"}, "Cannot edit f.go/child"},
	}
	for _, tc := range cases {
		res := f.call(t, Edit(), tc.input)
		if !res.IsError || !strings.HasPrefix(res.Content, tc.want) {
			t.Errorf("%v: got %+v, want an error starting %q", tc.input, res, tc.want)
		}
	}
	if got := readText(t, p); got != editSource {
		t.Errorf("f.go changed to %q", got)
	}
	assertNoTempFiles(t, f.root)
}

func TestEditDeniesEscapes(t *testing.T) {
	t.Parallel()
	f := newFileFixture(t)
	for _, p := range f.escapes() {
		res := f.call(t, Edit(), map[string]any{"file_path": p, "old_string": "top", "new_string": "no"})
		if !res.IsError || !strings.Contains(res.Content, "Access denied") {
			t.Errorf("%s: got %+v, want access denied", p, res)
		}
	}
	f.assertOutsideUntouched(t)
}

func TestEditThroughSymlinkInsideRoot(t *testing.T) {
	t.Parallel()
	f := newFileFixture(t)
	target := filepath.Join(f.root, "sub", "target.go")
	writeFile(t, target, editSource)
	mustSymlink(t, "sub/target.go", filepath.Join(f.root, "alias.go"))
	res := f.call(t, Edit(), map[string]any{"file_path": "alias.go", "old_string": "package main", "new_string": "package lib"})
	if res.IsError || res.Content != "Replaced 1 occurrence in alias.go" {
		t.Fatalf("got %+v", res)
	}
	if got := readText(t, target); !strings.HasPrefix(got, "package lib\n") {
		t.Errorf("target = %q", got)
	}
	if st, err := os.Lstat(filepath.Join(f.root, "alias.go")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("alias.go is no longer a symlink: %v", err)
	}
}
