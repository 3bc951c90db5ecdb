package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/toolwire/toolwire/tool"
)

// EditMaxFileBytes is the size beyond which Edit refuses a file: it holds
// the file in memory twice.
const EditMaxFileBytes = 64 << 20

const editDescription = `Replaces exact text in an existing file.

- file_path is absolute or relative to the working directory, and must stay inside it.
- old_string must match the file's text exactly, whitespace and indentation included (do not include the line-number prefix Read shows).
- The edit fails if old_string is not in the file, or appears more than once: then give more surrounding context to make it unique, or set replace_all to replace every occurrence (for renaming, say).
- new_string must differ from old_string.
- The file is rewritten atomically and keeps its permissions. To create a file, use Write.`

const editSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The path of the file to change, absolute or relative to the working directory."},
    "old_string": {"type": "string", "description": "The exact text to replace."},
    "new_string": {"type": "string", "description": "The text to replace it with; must differ from old_string."},
    "replace_all": {"type": "boolean", "default": false, "description": "Replace every occurrence of old_string (default false: old_string must be unique)."}
  },
  "required": ["file_path", "old_string", "new_string"],
  "additionalProperties": false
}`

// editInput is the input of an Edit call.
type editInput struct {
	FilePath   string `json:"file_path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// Edit returns the Edit tool: exact string replacement in one file, never
// concurrency-safe nor read-only. It edits only inside the turn's working
// directory and rewrites the file atomically.
func Edit() *tool.Tool {
	return tool.MustBuild(tool.Definition{
		Path:        filePathOf,
		Name:        "Edit",
		Description: editDescription,
		InputSchema: json.RawMessage(editSchema),
		Call:        editCall,
	})
}

// editCall is the Edit tool's CallFunc. Problems with the input, the path
// or the file are error results; only a cancelled context is returned as
// an error.
func editCall(ctx context.Context, input json.RawMessage, tc tool.TurnContext, _ tool.Progress) (tool.Result, error) {
	var in editInput
	if err := decodeInput(input, &in); err != nil {
		return errorResult(err.Error()), nil
	}
	switch {
	case in.FilePath == "":
		return errorResult("file_path is empty"), nil
	case in.OldString == "":
		return errorResult("old_string is empty; to create a file or replace all of it, use Write"), nil
	case in.OldString == in.NewString:
		return errorResult("old_string and new_string are the same; there is nothing to change"), nil
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("edit: %w", err)
	}
	root, rel, err := openConfined(tc.WorkDir, in.FilePath)
	if err != nil {
		return pathErrorResult("edit", in.FilePath, err), nil
	}
	defer root.Close()

	st, err := root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errorResult("File does not exist: " + in.FilePath), nil
	case err != nil:
		return pathErrorResult("edit", in.FilePath, err), nil
	case st.IsDir():
		return errorResult(in.FilePath + " is a directory"), nil
	case st.Mode()&fs.ModeSymlink != 0:
		return errorResult("File does not exist: " + in.FilePath + " (a symbolic link that does not resolve)"), nil
	case !st.Mode().IsRegular():
		return errorResult(in.FilePath + " is not a regular file"), nil
	case st.Size() > EditMaxFileBytes:
		return errorResult(fmt.Sprintf("%s is too large to edit (%d bytes; the limit is %d)", in.FilePath, st.Size(), EditMaxFileBytes)), nil
	}
	data, err := root.ReadFile(rel)
	if err != nil {
		return pathErrorResult("edit", in.FilePath, err), nil
	}
	if isBinary(data[:min(len(data), readBinarySniff)]) {
		return errorResult(in.FilePath + " appears to be a binary file"), nil
	}

	text := string(data)
	n := strings.Count(text, in.OldString)
	switch {
	case n == 0:
		return errorResult("old_string not found in " + in.FilePath), nil
	case n > 1 && !in.ReplaceAll:
		return errorResult(fmt.Sprintf("old_string appears %d times in %s; give more context or set replace_all", n, in.FilePath)), nil
	}
	limit := 1
	if in.ReplaceAll {
		limit = -1
	}
	text = strings.Replace(text, in.OldString, in.NewString, limit)
	if err := writeAtomic(ctx, root, rel, []byte(text), st); err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, fmt.Errorf("edit: %w", ctx.Err())
		}
		return pathErrorResult("edit", in.FilePath, err), nil
	}
	return tool.Result{Content: fmt.Sprintf("Replaced %s in %s", plural(n, "occurrence"), in.FilePath)}, nil
}
