package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CLIPackage and CLIVersion are the Temporal CLI that serves the dev
// server (`temporal server start-dev`) when --temporal does not name one.
const (
	CLIPackage = "github.com/temporalio/cli/cmd/temporal"
	CLIVersion = "v1.5.1"
)

// cachedCLI is where the CLI of CLIVersion is installed: the user's cache
// directory, so that one install serves every run and every checkout, and
// the version in the path keeps another version from being picked up.
func cachedCLI() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the Temporal CLI (give --temporal): %w", err)
	}
	return filepath.Join(dir, "toolwire", "temporal-cli-"+CLIVersion, "temporal"), nil
}

// findCLI returns the Temporal CLI to run: path when given, else the
// cached CLIVersion, installed there with `go install` first when it is
// missing and install is true. Progress of an install goes to log.
func findCLI(ctx context.Context, path string, install bool, log io.Writer) (string, error) {
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("--temporal: %w", err)
		}
		return path, nil
	}
	bin, err := cachedCLI()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if !install {
		return "", fmt.Errorf("no Temporal CLI at %s (run without --no-install, or give --temporal)", bin)
	}
	fmt.Fprintf(log, "installing %s@%s into %s (once; a few minutes)\n", CLIPackage, CLIVersion, filepath.Dir(bin))
	cmd := exec.CommandContext(ctx, "go", "install", CLIPackage+"@"+CLIVersion)
	// GOFLAGS from a caller (-mod=vendor, say) would not apply to a module
	// installed at a version; GOBIN puts the binary in the cache.
	cmd.Env = append(os.Environ(), "GOBIN="+filepath.Dir(bin), "GOFLAGS=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %w\n%s", CLIPackage, CLIVersion, err, tail(out.String(), 20))
	}
	return bin, nil
}

// cliVersion is what the CLI says of itself, with the server version it
// embeds ("temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)").
func cliVersion(ctx context.Context, bin string) string {
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
