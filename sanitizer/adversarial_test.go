package sanitizer

import (
	"strings"
	"testing"
	"time"
)

// TestAdversarialInputsAreLinear feeds megabyte inputs built to hit the
// worst case of each step. Linear work takes milliseconds; quadratic work
// on this size would take far longer, so the generous bound is not flaky on a
// loaded machine or under the race detector.
func TestAdversarialInputsAreLinear(t *testing.T) {
	const n = 1 << 18
	inputs := map[string]string{
		"unclosed CDATA openers": strings.Repeat("<![CDATA[", n/9),
		"unterminated OSC":       strings.Repeat("\x1b]", n/2),
		"opens without close":    strings.Repeat("<", n),
		"closes without open":    strings.Repeat(">", n),
		"bar token prefix":       strings.Repeat("<|", n/2) + ">",
		"spaces before closers":  strings.Repeat(" ", n/2) + strings.Repeat("]>", n/4),
		"nested tags":            strings.Repeat("<tool_", n/12) + "<system>" + strings.Repeat("call>", n/12),
		"sys tokens":             strings.Repeat("<<SYS", n/10) + strings.Repeat(">>", n/10),
		"inst tokens":            strings.Repeat("[[INST", n/8) + strings.Repeat("]", n/8),
		"fence lines":            strings.Repeat("```\n", n/4),
		"invisible":              strings.Repeat("\u200b\U000E0041", n/7),
		"long attribute":         "<system " + strings.Repeat("a", n) + ">",
		"openers, never closed":  strings.Repeat("<system ", n/8),
		"openers around a <":     strings.Repeat("<user a=<", n/9) + strings.Repeat(">", n/9),
		"openers hiding tokens":  strings.Repeat("<|x <system ", n/12) + strings.Repeat("|>", n/12),
		"unicode-spaced openers": strings.Repeat("<\u3000system\u3000", n/11),
		"spaces after one <":     "<" + strings.Repeat(" ", n/2) + strings.Repeat("<user>", n/12),
	}
	for name, in := range inputs {
		start := time.Now()
		out := Error(in, Options{})
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: %v for %d bytes", name, d, len(in))
		}
		if m := wrappedMarkup(out); m != "" {
			t.Errorf("%s: live markup %q", name, m)
		}
	}
}
