package main

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestAuthTenants: `toolwire auth init` and `auth tenant add` write a
// configuration that `serve --nats-config` runs with, the stages signed
// in with their seed; a tenant's agent signs in with its own seed and its
// inbox prefix, and is refused another tenant's subjects.
// (internal/tenantauth's TestTenantIsolation tries every way in.)
func TestAuthTenants(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin, dir := sharedBinary(t), t.TempDir()
	auth := filepath.Join(dir, "auth")
	for _, args := range [][]string{{"init"}, {"tenant", "add", "acme"}, {"tenant", "add", "globex", "--password"}} {
		b, err := exec.Command(bin, append(append([]string{"auth"}, args...), "--dir", auth)...).CombinedOutput()
		if err != nil {
			t.Fatalf("auth %v: %v: %s", args, err, b)
		}
		// A password on a command line is every local user's to read.
		if strings.Contains(string(b), "--password") {
			t.Errorf("auth %v recommends a password on the command line:\n%s", args, b)
		}
		if args[len(args)-1] == "--password" && !strings.Contains(string(b), "NATS_PASSWORD") {
			t.Errorf("auth %v does not say to give the password in NATS_PASSWORD:\n%s", args, b)
		}
	}
	b, err := exec.Command(bin, "auth", "tenant", "add", "acme", "--dir", auth).CombinedOutput()
	if err == nil || !strings.Contains(string(b), "--force") {
		t.Errorf("adding acme twice: %v: %s", err, b)
	}
	b, err = exec.Command(bin, "auth", "tenant", "add", "a.b", "--dir", auth).CombinedOutput()
	if err == nil || !strings.Contains(string(b), `tenant "a.b"`) {
		t.Errorf("a tenant name with a dot: %v: %s", err, b)
	}

	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	p := startToolwire(t, "serve", "--nats-config", filepath.Join(auth, "nats.conf"), "--nkey", filepath.Join(auth, "stages.nk"),
		"--listen", addr, "--http", "", "--api", "", "--store", filepath.Join(dir, "data"), "--workdir", dir)
	p.waitLine(t, "toolwire serving", 60*time.Second)
	url := "nats://" + addr

	acme := []string{"--nats", url, "--nkey", filepath.Join(auth, "tenants", "acme.nk"), "--inbox-prefix", "_INBOX_tw.acme"}
	if b, err := exec.Command(bin, append([]string{"cancel", "--tenant", "acme", "--turn", "t1"}, acme...)...).CombinedOutput(); err != nil {
		t.Errorf("acme cancels its own turn: %v: %s", err, b)
	}
	nkey, err := nats.NkeyOptionFromSeed(filepath.Join(auth, "tenants", "acme.nk"))
	if err != nil {
		t.Fatal(err)
	}
	refused := make(chan error, 1)
	nc, err := nats.Connect(url, nkey, nats.CustomInboxPrefix("_INBOX_tw.acme"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case refused <- err:
		default:
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := nc.Publish("tw.globex.in.t1.cancel", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-refused:
		if !strings.Contains(err.Error(), `Publish to "tw.globex.in.t1.cancel"`) {
			t.Errorf("acme's publish to globex's subject: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("acme's publish to globex's subject was not refused")
	}
}
