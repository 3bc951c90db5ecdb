package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/toolwire/toolwire/tool"
)

const writeDescription = `Writes a file, creating it or replacing its whole content.

- file_path is absolute or relative to the working directory, and must stay inside it.
- Missing parent directories are created.
- An existing file is replaced whole and keeps its permissions; to change part of a file, prefer Edit.
- The file is written to a temporary file and renamed into place, so it is never left half written.
- A symlink to a file inside the working directory is written through; one leading outside is refused.`

const writeSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The path of the file to write, absolute or relative to the working directory."},
    "content": {"type": "string", "description": "The content to write: the file's whole new content."}
  },
  "required": ["file_path", "content"],
  "additionalProperties": false
}`

// writeInput is the input of a Write call.
type writeInput struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

// Write returns the Write tool. It changes files, so it is never
// concurrency-safe nor read-only (the fail-closed defaults). It writes only
// inside the turn's working directory, creating missing parent directories
// (friendlier than failing: the model would only create them with Bash),
// and replaces files atomically.
func Write() *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Path:        filePathOf,
		Name:        "Write",
		Description: writeDescription,
		InputSchema: json.RawMessage(writeSchema),
		Call:        writeCall,
	})
}

// writeCall is the Write tool's CallFunc. Problems with the path or the
// file are error results; only a cancelled context is returned as an error.
func writeCall(ctx context.Context, input json.RawMessage, tc tool.TurnContext, _ tool.Progress) (tool.Result, error) {
	var in writeInput
	if err := decodeInput(input, &in); err != nil {
		return errorResult(err.Error()), nil
	}
	if in.FilePath == "" {
		return errorResult("file_path is empty"), nil
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("write: %w", err)
	}
	root, rel, err := openConfined(tc.WorkDir, in.FilePath)
	if err != nil {
		return pathErrorResult("write", in.FilePath, err), nil
	}
	defer root.Close()

	// confine resolved every symlink of the path, so what is at rel now is
	// the file itself, nothing, or a link that does not resolve.
	prev, err := root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		prev = nil
		if dir := filepath.Dir(rel); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return pathErrorResult("write", in.FilePath, err), nil
			}
		}
	case err != nil:
		return pathErrorResult("write", in.FilePath, err), nil
	case prev.IsDir():
		return errorResult(in.FilePath + " is a directory"), nil
	case prev.Mode()&fs.ModeSymlink != 0:
		return errorResult(in.FilePath + " is a symbolic link that does not resolve; refusing to replace it"), nil
	case !prev.Mode().IsRegular():
		return errorResult(in.FilePath + " is not a regular file"), nil
	}

	if err := writeAtomic(ctx, root, rel, []byte(in.Content), prev); err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, fmt.Errorf("write: %w", ctx.Err())
		}
		return pathErrorResult("write", in.FilePath, err), nil
	}
	verb := "Created"
	if prev != nil {
		verb = "Overwrote"
	}
	return tool.Result{Content: fmt.Sprintf("%s %s (%s, %s)", verb, in.FilePath,
		plural(len(in.Content), "byte"), plural(countLines(in.Content), "line"))}, nil
}
