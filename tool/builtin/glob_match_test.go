package builtin

import (
	"slices"
	"strings"
	"testing"
)

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern  string
		anywhere bool
		path     string
		want     bool
	}{
		{"*.go", false, "a.go", true},
		{"*.go", false, "sub/a.go", false},
		{"*.go", true, "sub/a.go", true},
		{"*.go", true, "sub/deep/a.go", true},
		{"*.go", false, ".hidden.go", true},
		{"**/*.go", false, "a.go", true},
		{"**/*.go", false, "sub/deep/a.go", true},
		{"**/*.go", false, "sub/deep/a.txt", false},
		{"sub/**/*.go", false, "sub/a.go", true},
		{"sub/**/*.go", false, "sub/x/y/a.go", true},
		{"sub/**/*.go", false, "other/a.go", false},
		{"**/deep/*.go", false, "a/b/deep/c.go", true},
		{"**/deep/*.go", false, "deep/c.go", true},
		{"**/deep/*.go", false, "deep/x/c.go", false},
		{"a/**/b/**/c", false, "a/b/c", true},
		{"a/**/b/**/c", false, "a/x/b/y/z/c", true},
		{"a/**/b/**/c", false, "a/x/y/c", false},
		{"**/**/*.go", false, "a.go", true},
		{"**", false, "a/b/c", true},
		{"sub/**", false, "sub/x", true},
		{"sub/**", false, "subx/y", false},
		{"./*.go", false, "a.go", true},
		{"src//*.go", false, "src/a.go", true},
		{"*.{go,txt}", false, "a.txt", true},
		{"*.{go,txt}", false, "a.md", false},
		{"**/*.{ts,tsx}", false, "web/app.tsx", true},
		{"{src,test}/**/*.go", false, "test/x/a.go", true},
		{"{src,test}/**/*.go", false, "lib/a.go", false},
		{"a.{x,{y,z}}", false, "a.z", true},
		{"a.{x,{y,z}}", false, "a.w", false},
		{"{*.go,cmd/*.go}", true, "deep/a.go", true},
		{"{*.go,cmd/*.md}", true, "deep/cmd/a.md", false},
		{"{*.go,cmd/*.md}", true, "cmd/a.md", true},
		{"file?.[ch]", false, "file1.c", true},
		{"file?.[ch]", false, "file10.c", false},
		{"[{]x}", false, "{x}", true},
		{`\{x}`, false, "{x}", true},
		{"{a", false, "{a", true},
		{"a}", false, "a}", true},
		{"sub/*.go", true, "x/sub/a.go", false},
	}
	for _, tc := range cases {
		g, err := compileGlob(tc.pattern, tc.anywhere)
		if err != nil {
			t.Errorf("%q: %v", tc.pattern, err)
			continue
		}
		if got := g.match(tc.path); got != tc.want {
			t.Errorf("%q (anywhere %v) match %q = %v, want %v", tc.pattern, tc.anywhere, tc.path, got, tc.want)
		}
	}
}

func TestGlobCanDescend(t *testing.T) {
	cases := []struct {
		pattern, dir string
		want         bool
	}{
		{"*.go", "sub", false},
		{"sub/*.go", "sub", true},
		{"sub/*.go", "other", false},
		{"sub/*.go", "sub/deep", false},
		{"*/x/*.go", "a/x", true},
		{"*/x/*.go", "a/y", false},
		{"**/*.go", "a/b/c", true},
		{"sub/**", "sub/a/b", true},
		{"sub/**", "other", false},
		{"{a,b}/*.go", "b", true},
	}
	for _, tc := range cases {
		g, err := compileGlob(tc.pattern, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.canDescend(tc.dir); got != tc.want {
			t.Errorf("%q canDescend %q = %v, want %v", tc.pattern, tc.dir, got, tc.want)
		}
	}
}

func TestGlobBadPatterns(t *testing.T) {
	for _, p := range []string{"[", "a/[b", "*.[", `x\`} {
		if _, err := compileGlob(p, false); err == nil || !strings.Contains(err.Error(), "invalid glob pattern") {
			t.Errorf("%q: err = %v, want invalid glob pattern", p, err)
		}
	}
	// Every brace doubles the alternatives; the expansion is bounded.
	if _, err := compileGlob(strings.Repeat("{a,b}", 11), false); err == nil || !strings.Contains(err.Error(), "alternatives") {
		t.Errorf("2^11 alternatives: err = %v", err)
	}
	if _, err := compileGlob(strings.Repeat("{a,b}", 10), false); err != nil {
		t.Errorf("2^10 alternatives: %v", err)
	}
}

func TestExpandBraces(t *testing.T) {
	cases := map[string][]string{
		"a":              {"a"},
		"*.{go,txt}":     {"*.go", "*.txt"},
		"{a,b}{c,d}":     {"ac", "ad", "bc", "bd"},
		"x{a,{b,c}}y":    {"xay", "xby", "xcy"},
		"{a}":            {"a"},
		"{,a}":           {"", "a"},
		"{a,b":           {"{a,b"},
		"[{,}]{x,y}":     {"[{,}]x", "[{,}]y"},
		`\{a,b}`:         {`\{a,b}`},
		"src/{a,b}/*.go": {"src/a/*.go", "src/b/*.go"},
	}
	for in, want := range cases {
		got, err := expandBraces(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("expandBraces(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestSplitGlobBase(t *testing.T) {
	cases := []struct{ pattern, base, rest string }{
		{"*.go", "", "*.go"},
		{"**/*.go", "", "**/*.go"},
		{"a.go", "", "a.go"},
		{"src/a.go", "src", "a.go"},
		{"src/**/*.go", "src", "**/*.go"},
		{"src/pkg/*.go", "src/pkg", "*.go"},
		{"../*.go", "..", "*.go"},
		{"/etc/*", "/etc", "*"},
		{"/x", "/", "x"},
		{"{a,b}/*.go", "", "{a,b}/*.go"},
		{`a\*/b`, "", `a\*/b`},
	}
	for _, tc := range cases {
		base, rest := splitGlobBase(tc.pattern)
		if base != tc.base || rest != tc.rest {
			t.Errorf("splitGlobBase(%q) = %q, %q; want %q, %q", tc.pattern, base, rest, tc.base, tc.rest)
		}
	}
}
