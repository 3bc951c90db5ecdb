package builtin

import "testing"

func TestBenignExit(t *testing.T) {
	cases := []struct {
		command string
		code    int
		want    bool
	}{
		{"grep x f", 1, true},
		{"/usr/bin/grep x f", 1, true},
		{"rg x", 1, true},
		{"egrep 'a|b' f", 1, true},
		{"find . -name x", 1, true},
		{"diff a b", 1, true},
		{"cmp a b", 1, true},
		{"git diff --quiet", 1, true},
		{"git -C repo grep x", 1, true},
		{"cat f | grep x", 1, true},
		{"cd d && grep x f", 1, true},
		{"(ls; grep x f)", 1, true},
		{"{ ls; grep x f; }", 1, true},
		{"time grep x f", 1, true},
		{"ls\ngrep x f", 1, true},
		{"grep x f", 2, false},
		{"grep x f", 0, false},
		{"diff a b", 2, false},
		{"grep x f | wc -l", 1, false},
		{"grep x f && echo found", 1, false},
		{"! grep x f", 1, false},
		{"ls", 1, false},
		{"git status", 1, false},
		{"'grep' x f", 1, false},
		{"grep 'unterminated", 1, false},
		{"", 1, false},
	}
	for _, tc := range cases {
		if got := benignExit(tc.command, tc.code); got != tc.want {
			t.Errorf("benignExit(%q, %d) = %v, want %v", tc.command, tc.code, got, tc.want)
		}
	}
}
