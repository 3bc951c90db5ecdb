package builtin

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/toolwire/toolwire/tool"
)

// This file holds what Write, Edit, Glob and Grep share beyond confine: the
// opened root, atomic replacement of a file, and the resolution of a
// symlink met while walking the tree.

// openConfined confines name to the turn's root (see confine) and opens the
// real root, returning it with the path relative to it. All file access
// then goes through the os.Root, which refuses to leave the root even if
// the tree changes after the check.
func openConfined(workDir, name string) (*os.Root, string, error) {
	realRoot, rel, err := confine(workDir, name)
	if err != nil {
		return nil, "", err
	}
	root, err := os.OpenRoot(realRoot)
	if err != nil {
		return nil, "", fmt.Errorf("working directory: %w", err)
	}
	return root, rel, nil
}

// pathErrorResult is the result for a path that could not be confined or
// used: "Access denied" for a path outside the root, else "Cannot <verb>".
func pathErrorResult(verb, name string, err error) tool.Result {
	if errors.Is(err, ErrOutsideRoot) {
		return errorResult("Access denied: " + err.Error())
	}
	return errorResult(fmt.Sprintf("Cannot %s %s: %v", verb, name, err))
}

// writeAtomic creates or replaces the file rel inside root with data. It
// writes a temporary file in the same directory, syncs it and renames it
// over rel, so that a reader, or the file system after a crash, sees the
// old content or the new one, never part of it. A new file is created with
// mode 0644 less the umask; a replaced one (prev not nil) keeps its
// permission bits and, where the process may set them, its owner and group.
// A cancelled context stops the write before the rename.
//
// The rename replaces a symlink at rel rather than writing through it, and
// it breaks hard links; callers pass the resolved path of the file.
func writeAtomic(ctx context.Context, root *os.Root, rel string, data []byte, prev fs.FileInfo) (err error) {
	dir := filepath.Dir(rel)
	tmp := filepath.Join(dir, ".toolwire-"+strings.ToLower(rand.Text()[:12])+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = root.Remove(tmp)
		}
	}()
	if prev != nil {
		if err = f.Chmod(prev.Mode().Perm()); err != nil {
			return err
		}
		if st, ok := prev.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid()) {
			_ = f.Chown(int(st.Uid), int(st.Gid)) // best effort: only a privileged process may
		}
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = ctx.Err(); err != nil {
		return err
	}
	if err = root.Rename(tmp, rel); err != nil {
		return err
	}
	// Make the rename itself durable; a failure here loses nothing written.
	if d, derr := root.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// resolveLink resolves the symlink at p (slash-separated, relative to the
// root) and returns its target relative to the root, or false when the
// link dangles or leads out of the root. os.Root refuses absolute links
// even when they point inside it, so the link is resolved by path and the
// caller then opens the returned path, which has no links left, through
// the root.
func resolveLink(root *os.Root, p string) (string, bool) {
	realRoot := root.Name()
	resolved, err := filepath.EvalSymlinks(filepath.Join(realRoot, filepath.FromSlash(p)))
	if err != nil {
		return "", false
	}
	rel, err := filepath.Rel(realRoot, resolved)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	return rel, true
}

// countLines counts the lines of s, a last line without a newline included.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// plural renders n with the word, adding an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// isBinary reports whether head, the start of a file, holds a NUL byte.
func isBinary(head []byte) bool {
	return bytes.IndexByte(head, 0) >= 0
}
