package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRestartsAndDown: while a dead server cannot start again it is down
// and says why; each restart that brings it back is counted, failed
// attempts are not.
func TestRestartsAndDown(t *testing.T) {
	defer setVar(&backoffMax, 200*time.Millisecond)()
	marker := filepath.Join(t.TempDir(), "refuse")
	s := connect(t, "tsrv", "TESTSERVER_REFUSE_IF="+marker)
	if err := s.Down(); err != nil || s.Restarts() != 0 {
		t.Fatalf("after Connect: down %v, %d restarts", err, s.Restarts())
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res, _ := call(t, lookupTool(t, s, "crash"), `{}`); !res.IsError {
		t.Fatalf("crash: %+v", res)
	}
	waitUntil(t, "the server down", func() bool { return !s.Running() })
	// Down names the refusal once a restart attempt has failed.
	waitUntil(t, "a failed restart reported", func() bool {
		err := s.Down()
		return err != nil && strings.Contains(err.Error(), "refusing to start")
	})
	if err := s.Down(); !strings.Contains(err.Error(), "MCP server tsrv is not running") {
		t.Errorf("down: %v", err)
	}
	if n := s.Restarts(); n != 0 {
		t.Errorf("%d restarts counted while every attempt failed", n)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the server back", s.Running)
	if err := s.Down(); err != nil || s.Restarts() != 1 {
		t.Errorf("after the restart: down %v, %d restarts, want none and 1", err, s.Restarts())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Down(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("after Close: %v", err)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not %s after 10s", what)
		}
	}
}
