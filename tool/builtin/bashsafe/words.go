package bashsafe

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// argument returns the string a command argument word stands for, or an
// error when the shell would expand it into something else first.
//
// Expansion is what makes a command's meaning depend on state: a glob or a
// brace expansion can turn into an option (a file named "-delete" matched by
// `find *`), a variable into anything at all.
func argument(w *syntax.Word) (string, error) {
	s, err := literal(w)
	if err != nil {
		return "", err
	}
	if hasGlob(w) {
		return "", fmt.Errorf("unquoted glob in %q", s)
	}
	if err := checkTilde(w); err != nil {
		return "", err
	}
	if hasBraceExpansion(w) {
		return "", fmt.Errorf("brace expansion in %q", s)
	}
	return s, nil
}

// hasBraceExpansion reports whether the shell would expand braces in w, as
// in {a,b} or {1..3} (but not {} or {x}).
func hasBraceExpansion(w *syntax.Word) bool {
	// SplitBraces works in place and reports only that it saw a brace, so it
	// runs on a copy and the result is searched for expansions.
	cp := &syntax.Word{Parts: slices.Clone(w.Parts)}
	syntax.SplitBraces(cp)
	return slices.ContainsFunc(cp.Parts, func(p syntax.WordPart) bool {
		_, ok := p.(*syntax.BraceExp)
		return ok
	})
}

// literal returns the value of w after quote removal, or an error when w
// contains an expansion other than globbing, braces or tilde (which argument
// checks, and which redirection targets and here-strings do not undergo or
// do not need to fear).
func literal(w *syntax.Word) (string, error) {
	if w == nil {
		return "", errors.New("missing word")
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			unescapeUnquoted(&b, p.Value)
		case *syntax.SglQuoted:
			if p.Dollar && strings.ContainsRune(p.Value, '\\') {
				// $'\x2do' is "-o": rather than decode ANSI-C escapes,
				// refuse them.
				return "", fmt.Errorf("$'...' escapes in %q", p.Value)
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", fmt.Errorf("%s in double quotes", nodeName(q))
				}
				unescapeDouble(&b, lit.Value)
			}
		default:
			return "", errors.New(nodeName(p))
		}
	}
	return b.String(), nil
}

// unescapeUnquoted removes the backslashes of an unquoted literal.
func unescapeUnquoted(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
}

// unescapeDouble removes the backslashes that are special inside double
// quotes; the others stay, as the shell keeps them.
func unescapeDouble(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
}

// hasGlob reports whether w has an unquoted pattern character. Quoted parts
// are replaced by a plain character rather than dropped, because a bracket
// expression may span them: [ 'a' ] (without spaces) is still a glob.
func hasGlob(w *syntax.Word) bool {
	var b strings.Builder
	for _, p := range w.Parts {
		if lit, ok := p.(*syntax.Lit); ok {
			b.WriteString(lit.Value)
		} else {
			b.WriteByte('x')
		}
	}
	return pattern.HasMeta(b.String(), 0)
}

// checkTilde accepts ~ and ~/... (the user's home, a fixed path) and refuses
// the tilde forms that read variables or other users' entries: ~+, ~-, ~user.
func checkTilde(w *syntax.Word) error {
	lit, ok := w.Parts[0].(*syntax.Lit)
	if !ok || !strings.HasPrefix(lit.Value, "~") {
		return nil
	}
	if lit.Value == "~" || strings.HasPrefix(lit.Value, "~/") {
		return nil
	}
	return fmt.Errorf("tilde expansion in %q", lit.Value)
}
