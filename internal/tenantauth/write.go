package tenantauth

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeFile replaces path with data, readable by its owner only, at once:
// data goes to a new file beside it, made 0600 before anything is written
// and synced, which is then renamed over path. os.WriteFile would keep the
// mode of a file that exists (a seed replaced with --force in a file once
// made world-readable would stay so) and leave half a file on a crash.
func writeFile(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("tenantauth: %w", err)
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
			err = fmt.Errorf("tenantauth: write %s: %w", path, err)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	// The rename itself lasts only once the directory is synced; a
	// directory that cannot be (some file systems) still has the file.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
