package sanitizer

import "strings"

// stripFences removes code-fence lines: a line whose first non-blank text is
// ``` or ~~~, whatever follows (a language tag, or nothing for a closing
// fence). The line goes with its newline, so the lines around it stay apart.
// A closing fence that ends a line of text ("Error: bad value```") goes too,
// with the blanks after it; the text before it stays as it was. A run of
// backticks inside a line opens nothing, so only one at the end counts.
func stripFences(s string) (string, bool) {
	if !strings.Contains(s, "```") && !strings.Contains(s, "~~~") {
		return s, false
	}
	var b strings.Builder
	changed := false
	for rest := s; rest != ""; {
		line, after, found := strings.Cut(rest, "\n")
		if isFenceLine(line) {
			changed = true
		} else {
			var cut bool
			if line, cut = trimClosingFence(line); cut {
				changed = true
			}
			if b.Cap() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(line)
			if found {
				b.WriteByte('\n')
			}
		}
		rest = after
	}
	if !changed {
		return s, false
	}
	return b.String(), true
}

func isFenceLine(line string) bool {
	t := strings.TrimLeft(line, " \t")
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// trimClosingFence removes the fences that end line: runs of three or more
// backticks or tildes followed by nothing but blanks, repeatedly, so that
// "x``` ```" keeps only "x". Each round only looks at what it removes.
func trimClosingFence(line string) (string, bool) {
	cut := false
	for {
		t := strings.TrimRight(line, " \t\r")
		n := len(t)
		if n == 0 || t[n-1] != '`' && t[n-1] != '~' {
			return line, cut
		}
		i := n - 1
		for i > 0 && t[i-1] == t[n-1] {
			i--
		}
		if n-i < 3 {
			return line, cut
		}
		line, cut = t[:i], true
	}
}

// stripCDATA removes <![CDATA[ … ]]> sections whole, content included; the
// keyword matches in any case. An opener never closed loses only itself.
func stripCDATA(s string) (string, bool) {
	const opener, closer = "<![cdata[", "]]>"
	if !strings.Contains(s, "<![") {
		return s, false
	}
	var b strings.Builder
	changed := false
	unclosed := false // no closer is left: later openers need not search
	rest := s
	for {
		i := strings.Index(rest, "<![")
		if i < 0 {
			break
		}
		if len(rest)-i < len(opener) || !strings.EqualFold(rest[i:i+len(opener)], opener) {
			b.WriteString(rest[:i+3])
			rest = rest[i+3:]
			continue
		}
		changed = true
		b.WriteString(rest[:i])
		body := rest[i+len(opener):]
		j := -1
		if !unclosed {
			j = strings.Index(body, closer)
		}
		if j >= 0 {
			rest = body[j+len(closer):]
		} else {
			unclosed = true
			rest = body
		}
	}
	if !changed {
		return s, false
	}
	b.WriteString(rest)
	return b.String(), true
}
