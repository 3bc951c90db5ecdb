package builtin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteCreatesFilesAndDirectories(t *testing.T) {
	t.Parallel()
	f := newFileFixture(t)
	cases := []struct {
		path, content, want, file string
	}{
		{"new.txt", "hello\nworld\n", "Created new.txt (12 bytes, 2 lines)", "new.txt"},
		{"a/b/c.txt", "x", "Created a/b/c.txt (1 byte, 1 line)", "a/b/c.txt"},
		{"empty.txt", "", "Created empty.txt (0 bytes, 0 lines)", "empty.txt"},
		{"sub/../sub/d.txt", "one\ntwo", "Created sub/../sub/d.txt (7 bytes, 2 lines)", "sub/d.txt"},
		{filepath.Join(f.root, "abs.txt"), "é\n", "Created " + filepath.Join(f.root, "abs.txt") + " (3 bytes, 1 line)", "abs.txt"},
	}
	for _, tc := range cases {
		res := f.call(t, Write(), map[string]any{"file_path": tc.path, "content": tc.content})
		if res.IsError || res.Content != tc.want {
			t.Errorf("%s: got %+v, want %q", tc.path, res, tc.want)
			continue
		}
		if got := readText(t, filepath.Join(f.root, tc.file)); got != tc.content {
			t.Errorf("%s holds %q, want %q", tc.file, got, tc.content)
		}
		assertNoTempFiles(t, filepath.Dir(filepath.Join(f.root, tc.file)))
	}
	if st, err := os.Stat(filepath.Join(f.root, "a", "b")); err != nil || !st.IsDir() {
		t.Errorf("a/b was not created as a directory: %v", err)
	}
	f.assertOutsideUntouched(t)
}

func TestWriteOverwritesKeepingMode(t *testing.T) {
	t.Parallel()
	f := newFileFixture(t)
	p := filepath.Join(f.root, "sub", "conf.txt")
	writeFile(t, p, "old content that is longer\n")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	res := f.call(t, Write(), map[string]any{"file_path": "sub/conf.txt", "content": "new\n"})
	if res.IsError || res.Content != "Overwrote sub/conf.txt (4 bytes, 1 line)" {
		t.Fatalf("got %+v", res)
	}
	if got := readText(t, p); got != "new\n" {
		t.Errorf("conf.txt = %q", got)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode after overwrite: %v, %v; want 0600", st.Mode(), err)
	}
	assertNoTempFiles(t, filepath.Dir(p))
}

func TestWriteThroughSymlinkInsideRoot(t *testing.T) {
	t.Parallel()
	f := newFileFixture(t)
	target := filepath.Join(f.root, "sub", "target.txt")
	writeFile(t, target, "old\n")
	mustSymlink(t, "sub/target.txt", filepath.Join(f.root, "alias.txt"))
	mustSymlink(t, target, filepath.Join(f.root, "abs-alias.txt"))
	mustSymlink(t, filepath.Join(f.root, "sub"), filepath.Join(f.root, "subalias"))
	for _, p := range []string{"alias.txt", "abs-alias.txt", "subalias/target.txt"} {
		res := f.call(t, Write(), map[string]any{"file_path": p, "content": "via " + p})
		if res.IsError || !strings.HasPrefix(res.Content, "Overwrote "+p) {
			t.Errorf("%s: got %+v", p, res)
		}
		if got := readText(t, target); got != "via "+p {
			t.Errorf("%s: target holds %q", p, got)
		}
	}
	for _, link := range []string{"alias.txt", "abs-alias.txt", "subalias"} {
		if st, err := os.Lstat(filepath.Join(f.root, link)); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink: %v", link, err)
		}
	}
}

func TestWriteDeniesEscapes(t *testing.T) {
	t.Parallel()
	f := newFileFixture(t)
	for _, p := range f.escapes() {
		res := f.call(t, Write(), map[string]any{"file_path": p, "content": "pwned\n"})
		if !res.IsError || !strings.Contains(res.Content, "Access denied") {
			t.Errorf("%s: got %+v, want access denied", p, res)
		}
	}
	// A dangling symlink is not written through, wherever it points.
	mustSymlink(t, filepath.Join(f.outside, "missing.txt"), filepath.Join(f.root, "dangling-out"))
	mustSymlink(t, "missing.txt", filepath.Join(f.root, "dangling-in"))
	for _, p := range []string{"dangling-out", "dangling-in"} {
		res := f.call(t, Write(), map[string]any{"file_path": p, "content": "pwned\n"})
		if !res.IsError || !strings.Contains(res.Content, "symbolic link that does not resolve") {
			t.Errorf("%s: got %+v, want a refusal", p, res)
		}
		if st, err := os.Lstat(filepath.Join(f.root, p)); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s was replaced: %v", p, err)
		}
	}
	f.assertOutsideUntouched(t)
	if _, err := os.Lstat(filepath.Join(f.root, "missing.txt")); err == nil {
		t.Error("writing through dangling-in created missing.txt")
	}
}

func TestWriteErrors(t *testing.T) {
	t.Parallel()
	f := newFileFixture(t)
	writeFile(t, filepath.Join(f.root, "file.txt"), "keep\n")
	cases := []struct{ path, want string }{
		{"", "file_path is empty"},
		{"sub", "sub is a directory"},
		{".", ". is a directory"},
		{"file.txt/child", "Cannot write file.txt/child"},
		{"file.txt/a/b", "Cannot write file.txt/a/b"},
	}
	for _, tc := range cases {
		res := f.call(t, Write(), map[string]any{"file_path": tc.path, "content": "x"})
		if !res.IsError || !strings.Contains(res.Content, tc.want) {
			t.Errorf("%q: got %+v, want an error containing %q", tc.path, res, tc.want)
		}
	}
	if got := readText(t, filepath.Join(f.root, "file.txt")); got != "keep\n" {
		t.Errorf("file.txt = %q", got)
	}
}

// TestWriteAtomicCleansUp checks that a write stopped before its rename
// leaves the old file whole and no temporary file behind.
func TestWriteAtomicCleansUp(t *testing.T) {
	t.Parallel()
	f := newFileFixture(t)
	p := filepath.Join(f.root, "sub", "keep.txt")
	writeFile(t, p, "old\n")
	root, err := os.OpenRoot(f.root)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	st, err := root.Lstat("sub/keep.txt")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := writeAtomic(ctx, root, "sub/keep.txt", []byte("new\n"), st); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if got := readText(t, p); got != "old\n" {
		t.Errorf("keep.txt = %q", got)
	}
	assertNoTempFiles(t, filepath.Dir(p))
}
