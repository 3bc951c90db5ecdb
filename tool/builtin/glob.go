package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/toolwire/toolwire/tool"
)

// GlobMaxResults is how many paths a Glob call returns at most.
const GlobMaxResults = 1000

const globDescription = `Finds files by name pattern, like "**/*.go" or "src/**/*.{ts,tsx}".

- * and ? match within one path segment, [...] matches a character class, ** matches any number of directories, {a,b} matches either alternative.
- The pattern is matched against paths relative to path (default: the working directory); it may start with directories, or be absolute, as long as it stays inside the working directory.
- Returns matching files (not directories), one per line, relative to the working directory, most recently modified first; at most 1000.
- .git directories are skipped; symlinked directories are not followed.`

const globSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "The glob pattern to match files against, e.g. \"**/*.go\"."},
    "path": {"type": "string", "description": "The directory to search in, absolute or relative to the working directory (default: the working directory)."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

// globInput is the input of a Glob call.
type globInput struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
}

// Glob returns the Glob tool, always concurrency-safe and read-only; a
// user interrupt stops it, since it leaves nothing half done.
//
// Decisions: results are regular files (and symlinks to regular files
// inside the root), sorted by modification time, newest first, ties by
// path, like Claude Code's Glob; they are relative to the working
// directory. The walk does not follow symlinked directories, so a link to
// a directory outside the root cannot leak its contents, and a link to one
// inside would only list files a walk reaches anyway. .git is skipped.
func Glob() *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Path:            searchPathOf,
		Name:            "Glob",
		Description:     globDescription,
		InputSchema:     json.RawMessage(globSchema),
		Call:            globCall,
		ConcurrencySafe: tool.Always,
		ReadOnly:        tool.Always,
		Interrupt:       tool.InterruptCancel,
	})
}

// globMatch is one matching file.
type globMatch struct {
	path  string // slash-separated, relative to the root
	mtime time.Time
}

func globCall(ctx context.Context, input json.RawMessage, tc tool.TurnContext, _ tool.Progress) (tool.Result, error) {
	var in globInput
	if err := decodeInput(input, &in); err != nil {
		return errorResult(err.Error()), nil
	}
	if in.Pattern == "" {
		return errorResult("pattern is empty"), nil
	}
	dir := in.Path
	if dir == "" {
		dir = "."
	}
	root, rel, err := openConfined(tc.WorkDir, dir)
	if err != nil {
		return pathErrorResult("search", dir, err), nil
	}
	defer root.Close()
	switch st, err := root.Stat(rel); {
	case errors.Is(err, fs.ErrNotExist):
		return errorResult("Directory does not exist: " + dir), nil
	case err != nil:
		return pathErrorResult("search", dir, err), nil
	case !st.IsDir():
		return errorResult(dir + " is not a directory"), nil
	}

	// The pattern's leading literal directories (.. and an absolute start
	// included) narrow the walk; they are confined like any other path.
	prefix, rest := splitGlobBase(in.Pattern)
	pat, err := compileGlob(rest, false)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	base := rel
	if prefix != "" {
		name := prefix
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, prefix)
		}
		_, prefixRel, err := confine(tc.WorkDir, name)
		if err != nil {
			return pathErrorResult("search", name, err), nil
		}
		if st, err := root.Stat(prefixRel); err != nil || !st.IsDir() {
			return tool.Result{Content: "No files found"}, nil
		}
		base = prefixRel
	}

	matches, total, err := globWalk(ctx, root, filepath.ToSlash(base), pat, GlobMaxResults)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, fmt.Errorf("glob: %w", ctx.Err())
		}
		return pathErrorResult("search", dir, err), nil
	}
	if len(matches) == 0 {
		return tool.Result{Content: "No files found"}, nil
	}
	var out strings.Builder
	for _, m := range matches {
		out.WriteString(m.path)
		out.WriteByte('\n')
	}
	if total > len(matches) {
		fmt.Fprintf(&out, "(Results are truncated: showing the %d most recently modified of %d files. Use a more specific path or pattern.)\n", len(matches), total)
	}
	return tool.Result{Content: strings.TrimSuffix(out.String(), "\n")}, nil
}

// globWalk walks base (slash-separated, relative to root) and returns the
// files whose path relative to base matches pat, the newest limit of them
// in order, and how many matched in all.
func globWalk(ctx context.Context, root *os.Root, base string, pat *globPattern, limit int) ([]globMatch, int, error) {
	var matches []globMatch
	total := 0
	order := func() {
		sort.Slice(matches, func(i, j int) bool {
			if !matches[i].mtime.Equal(matches[j].mtime) {
				return matches[i].mtime.After(matches[j].mtime)
			}
			return matches[i].path < matches[j].path
		})
		if len(matches) > limit {
			matches = matches[:limit]
		}
	}
	err := walkFiles(ctx, root, base, pat.canDescend, func(p, relToBase string, d fs.DirEntry) error {
		if !pat.match(relToBase) {
			return nil
		}
		info, ok := fileInfo(root, p, d)
		if !ok {
			return nil
		}
		total++
		matches = append(matches, globMatch{path: p, mtime: info.ModTime()})
		if len(matches) >= 2*limit {
			order() // keep memory bounded on huge trees
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	order()
	return matches, total, nil
}

// walkFiles walks base, a directory given slash-separated and relative to
// root, in lexical order, and calls fn for every entry that is not a
// directory with its path relative to root and to base. It skips .git
// directories and those descend rejects (given their path relative to
// base), does not follow symlinked directories, and ignores directories
// it cannot read. It checks ctx as it goes and returns its error; an error
// of fn ends the walk and is returned.
func walkFiles(ctx context.Context, root *os.Root, base string, descend func(relToBase string) bool, fn func(p, relToBase string, d fs.DirEntry) error) error {
	n := 0
	return fs.WalkDir(root.FS(), base, func(p string, d fs.DirEntry, err error) error {
		if n++; n%256 == 1 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if p == base {
				return err
			}
			return nil // an unreadable directory or a vanished entry
		}
		if p == base {
			return nil
		}
		relToBase := p
		if base != "." {
			relToBase = p[len(base)+1:]
		}
		if d.IsDir() {
			if d.Name() == ".git" || (descend != nil && !descend(relToBase)) {
				return fs.SkipDir
			}
			return nil
		}
		return fn(p, relToBase, d)
	})
}

// fileInfo returns the information of the regular file at p (relative to
// root) that a walk met as d, following a symlink if it resolves to a
// regular file inside the root; ok is false for anything else.
func fileInfo(root *os.Root, p string, d fs.DirEntry) (fs.FileInfo, bool) {
	switch {
	case d.Type().IsRegular():
		info, err := d.Info()
		return info, err == nil
	case d.Type()&fs.ModeSymlink != 0:
		target, ok := resolveLink(root, p)
		if !ok {
			return nil, false
		}
		info, err := root.Stat(target)
		if err != nil || !info.Mode().IsRegular() {
			return nil, false
		}
		return info, true
	}
	return nil, false
}
