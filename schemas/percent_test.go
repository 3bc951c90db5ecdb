package schemas

import "testing"

func TestPercentEncoding(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"plain-ascii_1.0/x:y", "plain-ascii_1.0/x:y"},
		{"", ""},
		{"a b", "a%20b"},
		{`say "hi"`, "say%20%22hi%22"},
		{"100%", "100%25"},
		{"ü", "%C3%BC"},
		{"tab\tnl\n\x7f", "tab%09nl%0A%7F"},
		{"✓ 🙂", "%E2%9C%93%20%F0%9F%99%82"},
	} {
		if got := percentEncode(tc.in); got != tc.out {
			t.Errorf("percentEncode(%q) = %q, want %q", tc.in, got, tc.out)
		}
		if got, err := percentDecode(tc.out); err != nil || got != tc.in {
			t.Errorf("percentDecode(%q) = %q, %v; want %q", tc.out, got, err, tc.in)
		}
	}
	// Readers accept lower-case hex and escapes a writer need not have made.
	for in, want := range map[string]string{"%c3%bc": "ü", "%41%2f": "A/", "raw ü": "raw ü"} {
		if got, err := percentDecode(in); err != nil || got != want {
			t.Errorf("percentDecode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"%", "%4", "a%4", "%G0", "%0G", "%%", "%FF", "%C3", "\xff"} {
		if got, err := percentDecode(bad); err == nil {
			t.Errorf("percentDecode(%q) = %q, want an error", bad, got)
		}
	}
}
