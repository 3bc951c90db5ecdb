package bashsafe

import "testing"

func TestCheckSedScript(t *testing.T) {
	cases := []struct {
		script string
		ok     bool
	}{
		{"p", true},
		{"1,10p", true},
		{"$d", true},
		{"/re/d", true},
		{"/re/I,/end/Mp", true},
		{`\,path,p`, true},
		{"0~3p", true},
		{"1,+2d", true},
		{"1!G;h;$!d", true},
		{"s/a/b/", true},
		{"s/a/b/3gp", true},
		{`s/a\/b/c/`, true},
		{"s|/usr|/opt|g", true},
		{"y/abc/xyz/", true},
		{"/x/{s/a/b/;p}", true},
		{":a;N;$!ba", true},
		{"a\\\nappended text", true},
		{"1i inserted; w not a command", true},
		{"r other.txt", true},
		{"q5", true},
		{"l 40", true},
		{"# comment\np", true},
		{"=", true},
		{"w out", false},
		{"W out", false},
		{"/x/w out", false},
		{"s/a/b/w out", false},
		{"s/a/b/pw out", false},
		{"s/a/b/e", false},
		{"e date", false},
		{"1e", false},
		{"p;w out", false},
		{"{p\nw out\n}", false},
		{"s/a/b/ w out", false},
		{"s/[/]/x/w out", false},
		{"s/a/b", false},
		{"y/ab/c", false},
		{"{p", false},
		{"p}", false},
		{"k", false},
		{"1,", false},
		{"s/a/b/x", false},
	}
	for _, tc := range cases {
		if err := checkSedScript(tc.script); (err == nil) != tc.ok {
			t.Errorf("checkSedScript(%q) = %v, want ok %v", tc.script, err, tc.ok)
		}
	}
}
