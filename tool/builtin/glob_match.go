package builtin

import (
	"fmt"
	"path"
	"strings"
)

// globMaxAlternatives bounds the brace expansion of one pattern.
const globMaxAlternatives = 1024

// globMeta are the characters that make a path segment a pattern.
const globMeta = `*?[{\`

// globPattern is a compiled glob over slash-separated relative paths. A
// segment is matched by path.Match (*, ?, [...], \ escapes); a segment
// that is exactly ** matches zero or more whole segments; {a,b} braces,
// nested or not, expand into alternatives.
type globPattern struct {
	alts [][]string // the segments of each alternative
}

// compileGlob compiles pattern. With anywhere, an alternative without a
// slash matches a base name at any depth, as ripgrep's --glob does;
// without it, the pattern matches the whole relative path, as Glob does.
func compileGlob(pattern string, anywhere bool) (*globPattern, error) {
	expanded, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	g := &globPattern{}
	for _, alt := range expanded {
		var segs []string
		for _, s := range strings.Split(alt, "/") {
			switch {
			case s == "" || s == ".":
				continue
			case s == "**":
				if len(segs) > 0 && segs[len(segs)-1] == "**" {
					continue
				}
			default:
				if _, err := path.Match(s, ""); err != nil {
					return nil, fmt.Errorf("invalid glob pattern %q: %w", pattern, err)
				}
			}
			segs = append(segs, s)
		}
		if anywhere && !strings.Contains(alt, "/") && len(segs) == 1 && segs[0] != "**" {
			segs = []string{"**", segs[0]}
		}
		g.alts = append(g.alts, segs)
	}
	return g, nil
}

// match reports whether the slash-separated relative path p matches.
func (g *globPattern) match(p string) bool {
	parts := strings.Split(p, "/")
	for _, segs := range g.alts {
		if matchSegments(segs, parts) {
			return true
		}
	}
	return false
}

// canDescend reports whether a path below the directory dir could match,
// so that a walk can skip directories the pattern cannot reach.
func (g *globPattern) canDescend(dir string) bool {
	parts := strings.Split(dir, "/")
	for _, segs := range g.alts {
		if segmentsReachBelow(segs, parts) {
			return true
		}
	}
	return false
}

// matchSegments matches pattern segments against path segments; it runs
// in O(len(segs)·len(parts)) however many ** the pattern holds.
func matchSegments(segs, parts []string) bool {
	// cur[j]: the segments so far match parts[:j].
	cur := make([]bool, len(parts)+1)
	next := make([]bool, len(parts)+1)
	cur[0] = true
	for _, s := range segs {
		if s == "**" {
			reached := false
			for j := range cur {
				reached = reached || cur[j]
				next[j] = reached
			}
		} else {
			next[0] = false
			for j := 1; j <= len(parts); j++ {
				next[j] = false
				if cur[j-1] {
					next[j], _ = path.Match(s, parts[j-1])
				}
			}
		}
		cur, next = next, cur
	}
	return cur[len(parts)]
}

// segmentsReachBelow reports whether segs could match some path that has
// all of parts as its leading directories.
func segmentsReachBelow(segs, parts []string) bool {
	cur := make([]bool, len(parts)+1)
	cur[0] = true
	for _, s := range segs {
		if s == "**" {
			// ** takes the rest of the directory and what lies below it.
			for _, ok := range cur {
				if ok {
					return true
				}
			}
			return false
		}
		if cur[len(parts)] {
			return true // the directory is matched and segments are left for below it
		}
		next := make([]bool, len(parts)+1)
		alive := false
		for j := 1; j <= len(parts); j++ {
			if cur[j-1] {
				next[j], _ = path.Match(s, parts[j-1])
				alive = alive || next[j]
			}
		}
		if !alive {
			return false
		}
		cur = next
	}
	return false
}

// expandBraces expands the {a,b} alternatives of pattern; a brace without
// its closing partner, or inside [...] or escaped, is literal.
func expandBraces(pattern string) ([]string, error) {
	out := []string{}
	var expand func(p string) error
	expand = func(p string) error {
		open, end, commas := findBraces(p)
		if open < 0 {
			if len(out) >= globMaxAlternatives {
				return fmt.Errorf("invalid glob pattern %q: more than %d alternatives", pattern, globMaxAlternatives)
			}
			out = append(out, p)
			return nil
		}
		start := open + 1
		for _, c := range append(commas, end) {
			if err := expand(p[:open] + p[start:c] + p[end+1:]); err != nil {
				return err
			}
			start = c + 1
		}
		return nil
	}
	if err := expand(pattern); err != nil {
		return nil, err
	}
	return out, nil
}

// findBraces finds the first balanced {...} of p and the commas at its top
// level; open is -1 when there is none.
func findBraces(p string) (open, end int, commas []int) {
	open, depth := -1, 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			// A class runs to the next ] (a ] right after [ or [^ is part of it).
			j := i + 1
			if j < len(p) && p[j] == '^' {
				j++
			}
			if j < len(p) && p[j] == ']' {
				j++
			}
			for j < len(p) && p[j] != ']' {
				if p[j] == '\\' {
					j++
				}
				j++
			}
			if j < len(p) {
				i = j
			}
		case '{':
			if depth == 0 {
				open, commas = i, nil
			}
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth == 0 {
				return open, i, commas
			}
		}
	}
	return -1, -1, nil
}

// splitGlobBase splits pattern into its leading directories without
// pattern characters ("" when there are none; "/" or more for an absolute
// pattern) and the rest, which has at least the last segment.
func splitGlobBase(pattern string) (base, rest string) {
	segs := strings.Split(pattern, "/")
	i := 0
	for i < len(segs)-1 && !strings.ContainsAny(segs[i], globMeta) {
		i++
	}
	base = strings.Join(segs[:i], "/")
	if base == "" && strings.HasPrefix(pattern, "/") {
		base = "/"
	}
	return base, strings.Join(segs[i:], "/")
}
