package main

import (
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServeAloneReady: a NATS member that runs no stage is ready once its
// JetStream answers, and an API alone in front of it only once a pipeline
// has made its streams; before this, both answered "starting" forever.
func TestServeAloneReady(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary three times")
	}
	dir := t.TempDir()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	member := "127.0.0.1:" + strconv.Itoa(freePort(t))
	m := startToolwire(t, "serve", "--stages", "none", "--listen", addr, "--http", member, "--api", "",
		"--store", filepath.Join(dir, "data"))
	m.waitLine(t, "toolwire serving NATS only", 60*time.Second)
	waitReady := func(base string, want int, says string) {
		t.Helper()
		var code int
		var body string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if code, body = get(t, "http://"+base+"/readyz"); code == want && strings.Contains(body, says) {
				return
			}
		}
		t.Fatalf("/readyz of %s: %d %q, want %d %q", base, code, body, want, says)
	}
	waitReady(member, http.StatusOK, "ready")

	apiHTTP := "127.0.0.1:" + strconv.Itoa(freePort(t))
	api := startToolwire(t, "serve", "--nats", "nats://"+addr, "--stages", "none", "--http", apiHTTP,
		"--api", "127.0.0.1:"+strconv.Itoa(freePort(t)))
	api.waitLine(t, "toolwire serving NATS only", 60*time.Second)
	waitReady(apiHTTP, http.StatusServiceUnavailable, "stream")

	stages := startToolwire(t, "serve", "--nats", "nats://"+addr, "--executors", "1", "--test-tools", "--workdir", dir)
	stages.waitLine(t, "toolwire serving", 60*time.Second)
	waitReady(apiHTTP, http.StatusOK, "ready")
}
