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
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/toolwire/toolwire/tool"
)

const (
	// ReadDefaultLimit is how many lines a Read call returns when it does
	// not set limit.
	ReadDefaultLimit = 2000
	// ReadMaxLineChars is the length beyond which a line is cut.
	ReadMaxLineChars = 2000

	// readMaxLineBytes holds ReadMaxLineChars runes of up to four bytes
	// and a CRLF; a longer line is certainly cut.
	readMaxLineBytes = 4*ReadMaxLineChars + 2
	// readBinarySniff is how much of the file is searched for a NUL byte.
	readBinarySniff = 8000
)

const readDescription = `Reads a text file and returns its lines numbered like cat -n (line number, tab, line).

- file_path is absolute or relative to the working directory, and must stay inside it.
- By default up to 2000 lines are returned from the start; offset (1-based line number) and limit select another range, for long files.
- Lines longer than 2000 characters are cut.
- Directories cannot be read; use Bash with ls.`

const readSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The path of the file to read, absolute or relative to the working directory."},
    "offset": {"type": "integer", "minimum": 0, "description": "The line number to start reading from (1-based). Only for files too large to read at once."},
    "limit": {"type": "integer", "minimum": 1, "description": "The number of lines to read (default 2000)."}
  },
  "required": ["file_path"],
  "additionalProperties": false
}`

// readInput is the input of a Read call.
type readInput struct {
	FilePath string `json:"file_path"`
	Offset   int    `json:"offset,omitempty"`
	Limit    int    `json:"limit,omitempty"`
}

// Read returns the Read tool, always concurrency-safe and read-only. It
// reads only inside the turn's working directory.
func Read() *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Path:            filePathOf,
		Name:            "Read",
		Description:     readDescription,
		InputSchema:     json.RawMessage(readSchema),
		Call:            readFile,
		ConcurrencySafe: tool.Always,
		ReadOnly:        tool.Always,
	})
}

// readFile is the Read tool's CallFunc. Problems with the path or the file
// are error results for the model to act on; only a cancelled context is
// returned as an error.
func readFile(ctx context.Context, input json.RawMessage, tc tool.TurnContext, _ tool.Progress) (tool.Result, error) {
	var in readInput
	if err := decodeInput(input, &in); err != nil {
		return errorResult(err.Error()), nil
	}
	if in.FilePath == "" {
		return errorResult("file_path is empty"), nil
	}
	offset, limit := max(in.Offset, 1), in.Limit
	if limit <= 0 {
		limit = ReadDefaultLimit
	}

	realRoot, rel, err := confine(tc.WorkDir, in.FilePath)
	if errors.Is(err, ErrOutsideRoot) {
		return errorResult("Access denied: " + err.Error()), nil
	}
	if err != nil {
		return errorResult(fmt.Sprintf("Cannot read %s: %v", in.FilePath, err)), nil
	}
	root, err := os.OpenRoot(realRoot)
	if err != nil {
		return errorResult(fmt.Sprintf("Cannot open the working directory: %v", err)), nil
	}
	defer root.Close()
	// O_NONBLOCK keeps a FIFO from blocking the open until a writer comes;
	// it does nothing to regular files, and anything else is refused below.
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return errorResult("File does not exist: " + in.FilePath), nil
	}
	if err != nil {
		return errorResult(fmt.Sprintf("Cannot read %s: %v", in.FilePath, err)), nil
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return errorResult(fmt.Sprintf("Cannot read %s: %v", in.FilePath, err)), nil
	case st.IsDir():
		return errorResult(in.FilePath + " is a directory, not a file; list it with Bash (ls)"), nil
	case !st.Mode().IsRegular():
		return errorResult(in.FilePath + " is not a regular file"), nil
	}

	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(readBinarySniff); bytes.IndexByte(head, 0) >= 0 {
		return errorResult(in.FilePath + " appears to be a binary file"), nil
	}
	content, err := numberLines(ctx, br, offset, limit)
	if ctx.Err() != nil {
		return tool.Result{}, fmt.Errorf("read: %w", ctx.Err())
	}
	if err != nil {
		return errorResult(fmt.Sprintf("Cannot read %s: %v", in.FilePath, err)), nil
	}
	return tool.Result{Content: content}, nil
}

func errorResult(text string) tool.Result { return tool.Result{Content: text, IsError: true} }

// numberLines returns up to limit lines from line offset on (1-based), each
// as "%6d\t<line>", cut at ReadMaxLineChars.
func numberLines(ctx context.Context, br *bufio.Reader, offset, limit int) (string, error) {
	var out strings.Builder
	lineNo, shown := 0, 0
	var line []byte
	for shown < limit {
		if lineNo%1024 == 0 && ctx.Err() != nil {
			return "", ctx.Err()
		}
		next, cut, err := readLine(br, line[:0])
		line = next // reuse the buffer for the next line
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return "", err
		}
		if eof && len(line) == 0 && !cut {
			break
		}
		lineNo++
		if lineNo >= offset {
			writeLine(&out, lineNo, line, cut)
			shown++
		}
		if eof {
			break
		}
	}
	if shown == 0 && offset > 1 {
		return fmt.Sprintf("(the file has %d lines; offset %d is past its end)", lineNo, offset), nil
	}
	return strings.ToValidUTF8(strings.TrimSuffix(out.String(), "\n"), "\uFFFD"), nil
}

// readLine reads one line into buf, keeping at most readMaxLineBytes of it.
// It reports whether bytes were dropped, and io.EOF when the input ended.
func readLine(br *bufio.Reader, buf []byte) (line []byte, cut bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		room := readMaxLineBytes - len(buf)
		if len(chunk) > room {
			chunk, cut = chunk[:max(room, 0)], true
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return buf, cut, err
	}
}

// writeLine appends one numbered line, without its line ending, cut at
// ReadMaxLineChars.
func writeLine(out *strings.Builder, n int, line []byte, cut bool) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if cut || utf8.RuneCount(line) > ReadMaxLineChars {
		i, count := 0, 0
		for i < len(line) && count < ReadMaxLineChars {
			_, size := utf8.DecodeRune(line[i:])
			i += size
			count++
		}
		line, cut = line[:i], true
	}
	fmt.Fprintf(out, "%6d\t%s", n, line)
	if cut {
		out.WriteString("... [line truncated]")
	}
	out.WriteByte('\n')
}
