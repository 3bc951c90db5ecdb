package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// DefaultServerVersion is the restate-server release installed when
// --restate-version is not given: pinned, so that two runs measure the same
// server.
const DefaultServerVersion = "1.7.12"

// npmPlatform is the suffix of the npm package that ships restate-server's
// binary for this OS and architecture (the wrapper package
// @restatedev/restate-server picks it the same way, from node's names).
func npmPlatform() (string, error) {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if arch == "" || (runtime.GOOS != "linux" && runtime.GOOS != "darwin") {
		return "", fmt.Errorf("restate-server is shipped on npm for linux and darwin, x64 and arm64; not for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return runtime.GOOS + "-" + arch, nil
}

// defaultCacheDir is where installed servers are kept between runs: the
// binary is over 200 MiB, so it is installed once per version, not per run.
func defaultCacheDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "toolwire", "restate-server")
	}
	return filepath.Join(os.TempDir(), "toolwire-restate-server")
}

// InstallServer returns the path of restate-server's binary of the given
// version under dir, installing @restatedev/restate-server with npm into
// dir/version first when it is not there yet, saying so on log.
func InstallServer(ctx context.Context, dir, version string, log io.Writer) (string, error) {
	plat, err := npmPlatform()
	if err != nil {
		return "", err
	}
	root := filepath.Join(dir, version)
	bin := filepath.Join(root, "node_modules", "@restatedev", "restate-server-"+plat, "bin", "restate-server")
	if _, err := ServerVersion(ctx, bin); err == nil {
		return bin, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", errors.New("npm is not on PATH: install node and npm, or give --restate-bin")
	}
	fmt.Fprintf(log, "installing @restatedev/restate-server@%s with npm under %s\n", version, root)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	// --ignore-scripts: the package's only install script is a download
	// counter; the binary comes with the platform package itself.
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", root,
		"--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error",
		"@restatedev/restate-server@"+version)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install @restatedev/restate-server@%s: %w\n%s", version, err, out)
	}
	if _, err := ServerVersion(ctx, bin); err != nil {
		return "", fmt.Errorf("installed, but %s does not run: %w", bin, err)
	}
	return bin, nil
}

// ServerVersion runs the binary with --version and returns the version it
// prints ("restate-server 1.7.12"): a check that it runs at all, and the
// version the report names.
func ServerVersion(ctx context.Context, bin string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", err
	}
	f := strings.Fields(string(out))
	if len(f) < 2 || f[0] != "restate-server" {
		return "", fmt.Errorf("%s --version printed %q", bin, out)
	}
	return f[1], nil
}
