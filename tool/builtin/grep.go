package builtin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/toolwire/toolwire/tool"
)

const (
	// GrepMaxLineChars is the length beyond which a shown line is cut.
	GrepMaxLineChars = 2000

	// grepMaxLineBytes bounds the part of a line that is searched; the
	// rest of a longer line is neither searched nor shown.
	grepMaxLineBytes = 1 << 20
	// grepMaxOutput bounds the output held in memory; the executor cuts
	// or stores the content beyond the tool's cap later.
	grepMaxOutput = 4 << 20
)

// Output modes of Grep.
const (
	grepContent = "content"
	grepFiles   = "files_with_matches"
	grepCount   = "count"
)

const grepDescription = `Searches file contents with a regular expression, like ripgrep.

- pattern is a Go (RE2) regular expression matched against each line, e.g. "func\s+\w+" or "log.*Error"; -i makes it case-insensitive. Escape literal braces and dots ("interface\{\}").
- path is a file or a directory (default: the working directory), inside the working directory. Directories are searched recursively; .git directories, binary files and symlinked directories are skipped. Paths in the output are relative to the working directory.
- glob filters the files searched, like rg --glob: "*.go" or "*.{ts,tsx}" match file names at any depth, "src/**/*.go" matches paths relative to path, and a leading ! excludes ("!*_test.go").
- output_mode "files_with_matches" (default) lists the files that match; "count" gives path:count of matching lines; "content" shows path:line:text, with -n line numbers (default true) and -A/-B/-C context lines (context lines use - instead of :, and -- separates groups).
- head_limit keeps only the first N lines or entries of the output.
- No match is not an error: the result is "No matches found".`

const grepSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "The regular expression (Go RE2 syntax) to search for in file contents."},
    "path": {"type": "string", "description": "The file or directory to search in, absolute or relative to the working directory (default: the working directory)."},
    "glob": {"type": "string", "description": "Glob pattern to filter files, e.g. \"*.go\", \"**/*.{ts,tsx}\", or \"!*_test.go\" to exclude (like rg --glob)."},
    "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "description": "\"content\" shows matching lines (with -n, -A, -B, -C), \"files_with_matches\" lists matching files, \"count\" gives match counts per file. Default \"files_with_matches\"."},
    "-i": {"type": "boolean", "description": "Case-insensitive search (rg -i)."},
    "-n": {"type": "boolean", "description": "Show line numbers (rg -n); only with output_mode \"content\". Default true."},
    "-A": {"type": "integer", "minimum": 0, "description": "Lines to show after each match (rg -A); only with output_mode \"content\"."},
    "-B": {"type": "integer", "minimum": 0, "description": "Lines to show before each match (rg -B); only with output_mode \"content\"."},
    "-C": {"type": "integer", "minimum": 0, "description": "Lines to show before and after each match (rg -C); only with output_mode \"content\". -A and -B take precedence."},
    "head_limit": {"type": "integer", "minimum": 0, "description": "Keep only the first N lines or entries of the output, like | head -N (0: no limit)."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

// grepInput is the input of a Grep call.
type grepInput struct {
	Pattern     string `json:"pattern"`
	Path        string `json:"path,omitempty"`
	Glob        string `json:"glob,omitempty"`
	OutputMode  string `json:"output_mode,omitempty"`
	IgnoreCase  bool   `json:"-i,omitempty"`
	LineNumbers *bool  `json:"-n,omitempty"`
	After       *int   `json:"-A,omitempty"`
	Before      *int   `json:"-B,omitempty"`
	Context     *int   `json:"-C,omitempty"`
	HeadLimit   int    `json:"head_limit,omitempty"`
}

// Grep returns the Grep tool, a regexp search written in Go, always
// concurrency-safe and read-only; a user interrupt stops it.
//
// Decisions: files are searched and listed in path order (like rg --sort
// path), so the output is deterministic; paths are relative to the working
// directory; the walk skips .git, binary files (a NUL byte in the first
// 8000 bytes) and symlinked directories, and follows a symlinked file only
// to a regular file inside the root. A single file given as path is
// searched even if it does not pass glob, and its lines are shown without
// the file name, as ripgrep does.
func Grep() *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Path:            searchPathOf,
		Name:            "Grep",
		Description:     grepDescription,
		InputSchema:     json.RawMessage(grepSchema),
		Call:            grepCall,
		ConcurrencySafe: tool.Always,
		ReadOnly:        tool.Always,
		Interrupt:       tool.InterruptCancel,
	})
}

func grepCall(ctx context.Context, input json.RawMessage, tc tool.TurnContext, _ tool.Progress) (tool.Result, error) {
	var in grepInput
	if err := decodeInput(input, &in); err != nil {
		return errorResult(err.Error()), nil
	}
	g, res, ok := newGrepper(in)
	if !ok {
		return res, nil
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
	st, err := root.Stat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorResult("Path does not exist: " + dir), nil
	case err != nil:
		return pathErrorResult("search", dir, err), nil
	case st.Mode().IsRegular():
		err = g.searchPath(ctx, root, filepath.ToSlash(rel), rel)
	case st.IsDir():
		g.withName = true
		err = g.searchTree(ctx, root, filepath.ToSlash(rel))
	default:
		return errorResult(dir + " is not a regular file or a directory"), nil
	}
	if ctx.Err() != nil {
		return tool.Result{}, fmt.Errorf("grep: %w", ctx.Err())
	}
	if err != nil && !errors.Is(err, errGrepStop) {
		return pathErrorResult("search", dir, err), nil
	}
	return tool.Result{Content: g.out.result()}, nil
}

// grepper holds one Grep call's settings and output.
type grepper struct {
	re            *regexp.Regexp
	mode          string
	lineNumbers   bool
	before, after int
	include       *globPattern // files to search, nil for all
	exclude       *globPattern // files and directories to skip, nil for none
	withName      bool         // prefix lines with the file's path

	out grepOutput
	// Where the last content line came from, for the -- separators.
	lastFile string
	lastLine int
}

// newGrepper checks the input and compiles its pattern and glob; when it
// cannot, it returns the error result and false.
func newGrepper(in grepInput) (*grepper, tool.Result, bool) {
	if in.Pattern == "" {
		return nil, errorResult("pattern is empty"), false
	}
	g := &grepper{mode: in.OutputMode, lineNumbers: true, out: grepOutput{headLimit: in.HeadLimit}}
	switch g.mode {
	case "":
		g.mode = grepFiles
	case grepContent, grepFiles, grepCount:
	default:
		return nil, errorResult(fmt.Sprintf("output_mode must be %q, %q or %q", grepContent, grepFiles, grepCount)), false
	}
	pattern := in.Pattern
	if in.IgnoreCase {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, errorResult("Invalid regular expression: " + err.Error()), false
	}
	g.re = re
	if in.LineNumbers != nil {
		g.lineNumbers = *in.LineNumbers
	}
	if in.Context != nil {
		g.before, g.after = max(*in.Context, 0), max(*in.Context, 0)
	}
	if in.Before != nil {
		g.before = max(*in.Before, 0)
	}
	if in.After != nil {
		g.after = max(*in.After, 0)
	}
	if in.Glob != "" {
		negate := strings.HasPrefix(in.Glob, "!")
		pat, err := compileGlob(strings.TrimPrefix(in.Glob, "!"), true)
		if err != nil {
			return nil, errorResult(err.Error()), false
		}
		if negate {
			g.exclude = pat
		} else {
			g.include = pat
		}
	}
	return g, tool.Result{}, true
}

// searchTree searches the files below base (slash-separated, relative to
// root) that pass the glob.
func (g *grepper) searchTree(ctx context.Context, root *os.Root, base string) error {
	descend := func(dir string) bool {
		if g.exclude != nil && g.exclude.match(dir) {
			return false
		}
		return g.include == nil || g.include.canDescend(dir)
	}
	return walkFiles(ctx, root, base, descend, func(p, relToBase string, d fs.DirEntry) error {
		if g.include != nil && !g.include.match(relToBase) || g.exclude != nil && g.exclude.match(relToBase) {
			return nil
		}
		var target string
		switch {
		case d.Type().IsRegular():
			target = filepath.FromSlash(p)
		case d.Type()&fs.ModeSymlink != 0:
			var ok bool
			if target, ok = resolveLink(root, p); !ok {
				return nil
			}
		default:
			return nil
		}
		return g.searchPath(ctx, root, p, target)
	})
}

// searchPath searches the file at target (relative to root), shown as
// name. A file that cannot be opened, or is not a regular file, is skipped.
func (g *grepper) searchPath(ctx context.Context, root *os.Root, name, target string) error {
	// O_NONBLOCK keeps a FIFO swapped in after the walk from blocking the
	// open; the Stat below refuses it.
	f, err := root.OpenFile(target, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	return g.search(ctx, f, name)
}

// grepContextLine is a line held for -B context.
type grepContextLine struct {
	n    int
	text string
}

// search searches one file's content r, shown as name.
func (g *grepper) search(ctx context.Context, r io.Reader, name string) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(readBinarySniff); isBinary(head) {
		return nil
	}
	var (
		ring      []grepContextLine // the last -B lines not shown
		afterLeft int               // -A lines still to show
		count     int               // matching lines
		buf       []byte
	)
	for n := 1; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		line, err := grepReadLine(br, buf[:0])
		buf = line
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return nil // a read error ends this file only
		}
		if eof && len(line) == 0 {
			break
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		matched := g.re.Match(line)
		switch {
		case g.mode == grepFiles && matched:
			return g.out.add(name)
		case g.mode == grepCount && matched:
			count++
		case g.mode != grepContent:
		case matched:
			for _, c := range ring {
				if err := g.emit(name, c.n, c.text, '-'); err != nil {
					return err
				}
			}
			ring = ring[:0]
			if err := g.emit(name, n, string(line), ':'); err != nil {
				return err
			}
			afterLeft = g.after
		case afterLeft > 0:
			afterLeft--
			if err := g.emit(name, n, string(line), '-'); err != nil {
				return err
			}
		case g.before > 0:
			if len(ring) == g.before {
				ring = append(ring[:0], ring[1:]...)
			}
			ring = append(ring, grepContextLine{n, string(line)})
		}
		if eof {
			break
		}
	}
	if g.mode == grepCount && count > 0 {
		if !g.withName {
			return g.out.add(strconv.Itoa(count))
		}
		return g.out.add(name + ":" + strconv.Itoa(count))
	}
	return nil
}

// emit adds one content line, matching (sep ':') or context (sep '-'),
// after a -- separator when context is on and the line does not follow the
// last one shown.
func (g *grepper) emit(name string, n int, text string, sep byte) error {
	if (g.before > 0 || g.after > 0) && g.lastFile != "" && (g.lastFile != name || g.lastLine+1 != n) {
		if err := g.out.add("--"); err != nil {
			return err
		}
	}
	g.lastFile, g.lastLine = name, n
	var b strings.Builder
	if g.withName {
		b.WriteString(name)
		b.WriteByte(sep)
	}
	if g.lineNumbers {
		b.WriteString(strconv.Itoa(n))
		b.WriteByte(sep)
	}
	b.WriteString(cutLine(text, GrepMaxLineChars))
	return g.out.add(b.String())
}

// cutLine cuts text at limit characters, marking the cut.
func cutLine(text string, limit int) string {
	if utf8.RuneCountInString(text) <= limit {
		return text
	}
	i, count := 0, 0
	for i < len(text) && count < limit {
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
		count++
	}
	return text[:i] + "... [line truncated]"
}

// grepReadLine reads one line into buf, keeping at most grepMaxLineBytes
// of it, and returns io.EOF when the input ended.
func grepReadLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if room := grepMaxLineBytes - len(buf); len(chunk) > room {
			chunk = chunk[:max(room, 0)]
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return buf, err
	}
}

// errGrepStop ends a search whose output is full.
var errGrepStop = errors.New("grep: output full")

// grepOutput collects output lines up to head_limit and grepMaxOutput.
type grepOutput struct {
	b         strings.Builder
	lines     int
	headLimit int  // 0: none
	limited   bool // a line beyond head_limit was left out
	capped    bool // output beyond grepMaxOutput was left out
}

// add appends a line, or returns errGrepStop when the output is full.
func (o *grepOutput) add(line string) error {
	if o.headLimit > 0 && o.lines >= o.headLimit {
		o.limited = true
		return errGrepStop
	}
	if o.b.Len()+len(line)+1 > grepMaxOutput {
		o.capped = true
		return errGrepStop
	}
	o.b.WriteString(line)
	o.b.WriteByte('\n')
	o.lines++
	return nil
}

// result is the content the model gets.
func (o *grepOutput) result() string {
	if o.lines == 0 {
		return "No matches found"
	}
	out := o.b.String()
	switch {
	case o.limited:
		out += fmt.Sprintf("[head_limit %d reached; more results not shown]\n", o.headLimit)
	case o.capped:
		out += fmt.Sprintf("[output truncated at %d bytes; narrow the search with path, glob or head_limit]\n", grepMaxOutput)
	}
	return strings.ToValidUTF8(strings.TrimSuffix(out, "\n"), "\uFFFD")
}
