package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwire/toolwire/tool"
)

// readFixture is a root with a ten-line file, next to a file outside it.
type readFixture struct {
	root    string // the turn's working directory
	outside string // a readable file outside root
}

func newReadFixture(t *testing.T) readFixture {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := 1; i <= 10; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	writeFile(t, filepath.Join(root, "ten.txt"), strings.Join(lines, "\n")+"\n")
	outside := filepath.Join(base, "secret.txt")
	writeFile(t, outside, "top secret\n")
	return readFixture{root: root, outside: outside}
}

func (f readFixture) read(t *testing.T, input map[string]any) tool.Result {
	t.Helper()
	raw, _ := json.Marshal(input)
	res, err := Read().Call(context.Background(), raw, tool.TurnContext{WorkDir: f.root}, nil)
	if err != nil {
		t.Fatalf("%v: %v", input, err)
	}
	return res
}

// numbered renders lines from..to of ten.txt as Read returns them.
func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%6d\tline %d\n", i, i)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func TestReadOffsetsAndLimits(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	abs := filepath.Join(f.root, "ten.txt")
	cases := []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"file_path": "ten.txt"}, numbered(1, 10)},
		{map[string]any{"file_path": abs}, numbered(1, 10)},
		{map[string]any{"file_path": "./sub/../ten.txt"}, numbered(1, 10)},
		{map[string]any{"file_path": "ten.txt", "offset": 3, "limit": 2}, numbered(3, 4)},
		{map[string]any{"file_path": "ten.txt", "offset": 0, "limit": 1}, numbered(1, 1)},
		{map[string]any{"file_path": "ten.txt", "offset": 9}, numbered(9, 10)},
		{map[string]any{"file_path": "ten.txt", "limit": 3}, numbered(1, 3)},
		{map[string]any{"file_path": "ten.txt", "offset": 10, "limit": 5}, numbered(10, 10)},
		{map[string]any{"file_path": "ten.txt", "offset": 11}, "(the file has 10 lines; offset 11 is past its end)"},
	}
	for _, tc := range cases {
		res := f.read(t, tc.input)
		if res.IsError || res.Content != tc.want {
			t.Errorf("%v: got %+v, want %q", tc.input, res, tc.want)
		}
	}
}

func TestReadDeniesEscapes(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	outsideDir := filepath.Dir(f.outside)
	mustSymlink(t, f.outside, filepath.Join(f.root, "link-out"))
	mustSymlink(t, outsideDir, filepath.Join(f.root, "dir-out"))
	mustSymlink(t, "../secret.txt", filepath.Join(f.root, "relative-out"))
	for _, p := range []string{
		"../secret.txt",
		"sub/../../secret.txt",
		f.outside,
		"/etc/hostname",
		"link-out",
		"dir-out/secret.txt",
		"relative-out",
		"../missing.txt",
		"dir-out/missing.txt",
	} {
		res := f.read(t, map[string]any{"file_path": p})
		if !res.IsError || !strings.Contains(res.Content, "Access denied") || strings.Contains(res.Content, "top secret") {
			t.Errorf("%s: got %+v, want access denied", p, res)
		}
	}
}

func TestReadFollowsSymlinksInsideRoot(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	mustSymlink(t, "ten.txt", filepath.Join(f.root, "alias.txt"))
	mustSymlink(t, filepath.Join(f.root, "sub"), filepath.Join(f.root, "subalias"))
	writeFile(t, filepath.Join(f.root, "sub", "one.txt"), "only\n")
	if res := f.read(t, map[string]any{"file_path": "alias.txt", "limit": 1}); res.IsError || res.Content != numbered(1, 1) {
		t.Errorf("alias.txt: got %+v", res)
	}
	if res := f.read(t, map[string]any{"file_path": "subalias/one.txt"}); res.IsError || res.Content != "     1\tonly" {
		t.Errorf("subalias/one.txt: got %+v", res)
	}
}

func TestReadRootThroughSymlink(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	link := filepath.Join(t.TempDir(), "root-link")
	mustSymlink(t, f.root, link)
	for _, p := range []string{"ten.txt", filepath.Join(link, "ten.txt"), filepath.Join(f.root, "ten.txt")} {
		raw, _ := json.Marshal(map[string]any{"file_path": p, "limit": 1})
		res, err := Read().Call(context.Background(), raw, tool.TurnContext{WorkDir: link}, nil)
		if err != nil || res.IsError || res.Content != numbered(1, 1) {
			t.Errorf("%s: got %+v, %v", p, res, err)
		}
	}
}

func TestReadMissingAndDirectory(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	cases := []struct{ path, want string }{
		{"missing.txt", "File does not exist: missing.txt"},
		{"sub/missing.txt", "File does not exist: sub/missing.txt"},
		{"ten.txt/child", "ten.txt/child"},
		{"sub", "sub is a directory"},
		{".", ". is a directory"},
		{"", "file_path is empty"},
	}
	for _, tc := range cases {
		res := f.read(t, map[string]any{"file_path": tc.path})
		if !res.IsError || !strings.Contains(res.Content, tc.want) {
			t.Errorf("%q: got %+v, want an error containing %q", tc.path, res, tc.want)
		}
	}
}

func TestReadRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	if err := syscall.Mkfifo(filepath.Join(f.root, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan tool.Result, 1)
	go func() {
		res, _ := Read().Call(context.Background(), json.RawMessage(`{"file_path":"fifo"}`), tool.TurnContext{WorkDir: f.root}, nil)
		done <- res
	}()
	select {
	case res := <-done:
		if !res.IsError || !strings.Contains(res.Content, "fifo is not a regular file") {
			t.Fatalf("got %+v, want a refusal", res)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a FIFO blocked")
	}
}

func TestReadContentShapes(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	long := strings.Repeat("é", ReadMaxLineChars+10)
	writeFile(t, filepath.Join(f.root, "empty.txt"), "")
	writeFile(t, filepath.Join(f.root, "crlf.txt"), "a\r\nb\r\n")
	writeFile(t, filepath.Join(f.root, "nonl.txt"), "a\nb")
	writeFile(t, filepath.Join(f.root, "long.txt"), long+"\nshort\n")
	writeFile(t, filepath.Join(f.root, "huge-line.txt"), strings.Repeat("x", 200_000)+"\nafter\n")
	writeFile(t, filepath.Join(f.root, "bin.dat"), "ELF\x00\x01\x02")
	cases := []struct {
		path    string
		want    string
		isError bool
	}{
		{"empty.txt", "", false},
		{"crlf.txt", "     1\ta\n     2\tb", false},
		{"nonl.txt", "     1\ta\n     2\tb", false},
		{"long.txt", "     1\t" + strings.Repeat("é", ReadMaxLineChars) + "... [line truncated]\n     2\tshort", false},
		{"huge-line.txt", "     1\t" + strings.Repeat("x", ReadMaxLineChars) + "... [line truncated]\n     2\tafter", false},
		{"bin.dat", "bin.dat appears to be a binary file", true},
	}
	for _, tc := range cases {
		res := f.read(t, map[string]any{"file_path": tc.path})
		if res.IsError != tc.isError || res.Content != tc.want {
			t.Errorf("%s: got error %v content %.120q, want error %v content %.120q", tc.path, res.IsError, res.Content, tc.isError, tc.want)
		}
	}
}

func TestReadEmptyWorkDirIsCurrentDir(t *testing.T) {
	f := newReadFixture(t)
	t.Chdir(f.root)
	res, err := Read().Call(context.Background(), json.RawMessage(`{"file_path":"ten.txt","limit":1}`), tool.TurnContext{}, nil)
	if err != nil || res.IsError || res.Content != numbered(1, 1) {
		t.Fatalf("got %+v, %v", res, err)
	}
}

func TestReadCancelled(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Read().Call(ctx, json.RawMessage(`{"file_path":"ten.txt"}`), tool.TurnContext{WorkDir: f.root}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestReadDefinition(t *testing.T) {
	r := Read()
	in := json.RawMessage(`{"file_path":"x"}`)
	if r.Name() != "Read" || !r.IsConcurrencySafe(in) || !r.IsReadOnly(in) || r.IsDestructive(in) || r.CancelsSiblings() {
		t.Fatal("Read must be safe, read-only, not destructive and not cancel siblings")
	}
}

func TestConfineWrapsErrOutsideRoot(t *testing.T) {
	t.Parallel()
	f := newReadFixture(t)
	if _, _, err := confine(f.root, "../secret.txt"); !errors.Is(err, ErrOutsideRoot) {
		t.Fatalf("err = %v, want ErrOutsideRoot", err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
