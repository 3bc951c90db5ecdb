package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrOutsideRoot is wrapped by the error of a path that resolves outside
// the turn's root.
var ErrOutsideRoot = errors.New("path is outside the working directory")

// confine resolves name against root and returns the real root and the
// path relative to it, or an error wrapping ErrOutsideRoot when the path,
// through .. or a symlink, leads out of the root.
//
// The check runs on fully resolved paths so that its error can say what
// happened; opening the file through an os.Root on the returned pair then
// enforces the same confinement without a window between check and use.
func confine(root, name string) (realRoot, rel string, err error) {
	if root == "" {
		if root, err = os.Getwd(); err != nil {
			return "", "", fmt.Errorf("working directory: %w", err)
		}
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return "", "", err
	}
	if realRoot, err = filepath.EvalSymlinks(root); err != nil {
		return "", "", fmt.Errorf("working directory: %w", err)
	}
	abs := name
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(root, abs)
	}
	resolved, err := resolveExisting(filepath.Clean(abs))
	if err != nil {
		return "", "", err
	}
	rel, err = filepath.Rel(realRoot, resolved)
	if err != nil || !filepath.IsLocal(rel) {
		return "", "", fmt.Errorf("%w: %s resolves to %s, outside %s", ErrOutsideRoot, name, resolved, realRoot)
	}
	return realRoot, rel, nil
}

// resolveExisting resolves the symlinks of the longest existing prefix of
// the clean absolute path p and appends the rest, so that a missing file is
// judged by where it would be.
func resolveExisting(p string) (string, error) {
	var rest string
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest), nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
