package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/toolwire/toolwire/tool"
)

// fileFixture is a root next to a directory outside it that holds a secret,
// with symlinks in the root that lead out: to the secret file (absolute and
// relative) and to the outside directory.
type fileFixture struct {
	root    string // the turn's working directory
	outside string // a directory outside root
	secret  string // a file in outside
}

const secretText = "top secret\n"

func newFileFixture(t *testing.T) fileFixture {
	t.Helper()
	base := t.TempDir()
	f := fileFixture{
		root:    filepath.Join(base, "root"),
		outside: filepath.Join(base, "outside"),
	}
	f.secret = filepath.Join(f.outside, "secret.txt")
	for _, d := range []string{filepath.Join(f.root, "sub"), f.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, f.secret, secretText)
	mustSymlink(t, f.secret, filepath.Join(f.root, "link-out"))
	mustSymlink(t, "../outside/secret.txt", filepath.Join(f.root, "rel-out"))
	mustSymlink(t, f.outside, filepath.Join(f.root, "dir-out"))
	return f
}

// escapes are file paths that lead out of the root: through .., as an
// absolute path, through a file symlink and through a directory symlink,
// to existing files and to new ones.
func (f fileFixture) escapes() []string {
	return []string{
		"../outside/secret.txt",
		"sub/../../outside/secret.txt",
		"../new.txt",
		f.secret,
		filepath.Join(f.outside, "new.txt"),
		"link-out",
		"rel-out",
		"dir-out/secret.txt",
		"dir-out/new.txt",
		"dir-out/deeper/new.txt",
	}
}

// assertOutsideUntouched fails the test if anything outside the root was
// created or changed.
func (f fileFixture) assertOutsideUntouched(t *testing.T) {
	t.Helper()
	if got := readText(t, f.secret); got != secretText {
		t.Errorf("secret changed to %q", got)
	}
	entries, err := os.ReadDir(f.outside)
	if err != nil || len(entries) != 1 {
		t.Errorf("outside holds %v (%v), want only secret.txt", entries, err)
	}
	entries, err = os.ReadDir(filepath.Dir(f.root))
	if err != nil || len(entries) != 2 {
		t.Errorf("the base holds %v (%v), want only root and outside", entries, err)
	}
}

// call runs tl in the fixture's root and fails the test on a Go error.
func (f fileFixture) call(t *testing.T, tl *tool.Tool, input map[string]any) tool.Result {
	t.Helper()
	return callIn(t, tl, f.root, input)
}

func callIn(t *testing.T, tl *tool.Tool, root string, input map[string]any) tool.Result {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Call(context.Background(), raw, tool.TurnContext{WorkDir: root}, nil)
	if err != nil {
		t.Fatalf("%s %v: %v", tl.Name(), input, err)
	}
	return res
}

func readText(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// assertNoTempFiles fails the test if a temporary file of writeAtomic is
// left in dir.
func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".toolwire-") {
			t.Errorf("temporary file %s left in %s", e.Name(), dir)
		}
	}
}

func TestFileToolSchemas(t *testing.T) {
	cases := []struct {
		tool  *tool.Tool
		input string
		valid bool
	}{
		{Write(), `{"file_path":"a.txt","content":""}`, true},
		{Write(), `{"file_path":"a.txt","content":"x\n"}`, true},
		{Write(), `{"file_path":"a.txt"}`, false},
		{Write(), `{"content":"x"}`, false},
		{Write(), `{"file_path":"a.txt","content":"x","mode":"0644"}`, false},
		{Edit(), `{"file_path":"a.go","old_string":"a","new_string":"b"}`, true},
		{Edit(), `{"file_path":"a.go","old_string":"a","new_string":"b","replace_all":true}`, true},
		{Edit(), `{"file_path":"a.go","old_string":"a"}`, false},
		{Edit(), `{"file_path":"a.go","old_string":"a","new_string":"b","replace_all":"yes"}`, false},
		{Edit(), `{"file_path":"a.go","old_string":"a","new_string":"b","count":1}`, false},
		{Glob(), `{"pattern":"**/*.go"}`, true},
		{Glob(), `{"pattern":"*.go","path":"sub"}`, true},
		{Glob(), `{"path":"sub"}`, false},
		{Glob(), `{"pattern":"*.go","glob":"x"}`, false},
		{Grep(), `{"pattern":"func"}`, true},
		{Grep(), `{"pattern":"func","path":"sub","glob":"*.go","output_mode":"content","-i":true,"-n":false,"-A":1,"-B":2,"-C":3,"head_limit":10}`, true},
		{Grep(), `{"pattern":"func","output_mode":"lines"}`, false},
		{Grep(), `{"pattern":"func","-A":-1}`, false},
		{Grep(), `{"pattern":"func","-n":"yes"}`, false},
		{Grep(), `{"pattern":"func","head_limit":-1}`, false},
		{Grep(), `{"pattern":"func","type":"go"}`, false},
		{Grep(), `{"glob":"*.go"}`, false},
	}
	for _, tc := range cases {
		sch := compileSchema(t, tc.tool)
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(tc.input))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); (err == nil) != tc.valid {
			t.Errorf("%s %s: validation error %v, want valid %v", tc.tool.Name(), tc.input, err, tc.valid)
		}
	}
}

// TestFileToolSchemaFields checks that every schema names exactly the
// input fields of docs/tools.md (Built-in tools) (Grep's context lines being -A, -B
// and -C) and describes each.
func TestFileToolSchemaFields(t *testing.T) {
	want := map[string][]string{
		"Write": {"content", "file_path"},
		"Edit":  {"file_path", "new_string", "old_string", "replace_all"},
		"Glob":  {"path", "pattern"},
		"Grep":  {"-A", "-B", "-C", "-i", "-n", "glob", "head_limit", "output_mode", "path", "pattern"},
	}
	for _, tl := range []*tool.Tool{Write(), Edit(), Glob(), Grep()} {
		var schema struct {
			Properties           map[string]struct{ Description string }
			AdditionalProperties *bool
		}
		if err := json.Unmarshal(tl.InputSchema(), &schema); err != nil {
			t.Fatal(err)
		}
		var names []string
		for name, p := range schema.Properties {
			names = append(names, name)
			if p.Description == "" {
				t.Errorf("%s.%s has no description", tl.Name(), name)
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, want[tl.Name()]) {
			t.Errorf("%s properties = %v, want %v", tl.Name(), names, want[tl.Name()])
		}
		if schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s allows additional properties", tl.Name())
		}
	}
}

func TestFileToolDefinitions(t *testing.T) {
	in := json.RawMessage(`{"file_path":"a.txt","content":"x","old_string":"x","new_string":"y","pattern":"x"}`)
	for _, tl := range []*tool.Tool{Write(), Edit()} {
		if tl.IsConcurrencySafe(in) || tl.IsReadOnly(in) || tl.CancelsSiblings() || tl.PlanModeAllowed() {
			t.Errorf("%s must be neither concurrency-safe nor read-only, nor cancel siblings, nor run in plan mode", tl.Name())
		}
		if tl.InterruptBehavior() != tool.InterruptBlock {
			t.Errorf("%s must block on interrupt, not stop half way", tl.Name())
		}
	}
	for _, tl := range []*tool.Tool{Glob(), Grep()} {
		if !tl.IsConcurrencySafe(in) || !tl.IsReadOnly(in) || tl.IsDestructive(in) || tl.CancelsSiblings() {
			t.Errorf("%s must be concurrency-safe, read-only, not destructive and not cancel siblings", tl.Name())
		}
		if tl.InterruptBehavior() != tool.InterruptCancel {
			t.Errorf("%s must stop on interrupt", tl.Name())
		}
	}
	for _, tl := range []*tool.Tool{Write(), Edit(), Glob(), Grep()} {
		if tl.MaxResultChars() != tool.DefaultMaxResultChars {
			t.Errorf("%s MaxResultChars = %d, want the default", tl.Name(), tl.MaxResultChars())
		}
	}
}

// TestFileToolsCancelled checks that a cancelled call is an error, not a
// result, and changes nothing.
func TestFileToolsCancelled(t *testing.T) {
	t.Parallel()
	f := newFileFixture(t)
	writeFile(t, filepath.Join(f.root, "a.txt"), "old\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		tool  *tool.Tool
		input string
	}{
		{Write(), `{"file_path":"new.txt","content":"x"}`},
		{Write(), `{"file_path":"a.txt","content":"x"}`},
		{Edit(), `{"file_path":"a.txt","old_string":"old","new_string":"new"}`},
		{Glob(), `{"pattern":"**/*"}`},
		{Grep(), `{"pattern":"old"}`},
	} {
		res, err := c.tool.Call(ctx, json.RawMessage(c.input), tool.TurnContext{WorkDir: f.root}, nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s %s: got %+v, %v, want context.Canceled", c.tool.Name(), c.input, res, err)
		}
	}
	if got := readText(t, filepath.Join(f.root, "a.txt")); got != "old\n" {
		t.Errorf("a.txt = %q after cancelled calls", got)
	}
	if _, err := os.Lstat(filepath.Join(f.root, "new.txt")); err == nil {
		t.Error("a cancelled Write created new.txt")
	}
	assertNoTempFiles(t, f.root)
}
