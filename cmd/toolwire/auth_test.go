package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestServeWithAuthentication: the embedded server started from a
// configuration file with users refuses an anonymous client; the stages
// and every command that connects sign in with --user/--password (or the
// NATS_* variables).
func TestServeWithAuthentication(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(conf, []byte(`authorization {
  users = [
    {user: toolwire, password: "s3cret-stages"}
  ]
}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := startToolwire(t, "serve", "--nats-config", conf, "--user", "toolwire", "--password", "s3cret-stages",
		"--listen", addr, "--http", "", "--api", "", "--store", filepath.Join(dir, "data"), "--workdir", dir)
	p.waitLine(t, "toolwire serving", 60*time.Second)
	url := "nats://" + addr

	if nc, err := nats.Connect(url); err == nil {
		nc.Close()
		t.Fatal("an anonymous client connected to a server whose configuration has users")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Errorf("anonymous connect: %v, want an authorization error", err)
	}

	bin := sharedBinary(t)
	out, err := exec.Command(bin, "top", "--nats", url, "--user", "toolwire", "--password", "s3cret-stages", "--once", "--json").Output()
	if err != nil {
		t.Fatalf("top with the credentials: %v", err)
	}
	var snap struct{ Consumers []struct{ Stage string } }
	if err := json.Unmarshal(out, &snap); err != nil || len(snap.Consumers) < 3 {
		t.Errorf("top with the credentials: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "cancel", "--turn", "t1")
	cmd.Env = append(os.Environ(), "NATS_URL="+url, "NATS_USER=toolwire", "NATS_PASSWORD=s3cret-stages")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("cancel with NATS_* credentials: %v: %s", err, b)
	}
	b, err := exec.Command(bin, "top", "--nats", url, "--once", "--json").CombinedOutput()
	if err == nil || !strings.Contains(strings.ToLower(string(b)), "authorization") {
		t.Errorf("top without credentials: %v: %s", err, b)
	}
	b, err = exec.Command(bin, "top", "--nats", url, "--password", "x").CombinedOutput()
	if err == nil || !strings.Contains(string(b), "--password without --user") {
		t.Errorf("a password without a user: %v: %s", err, b)
	}
}
