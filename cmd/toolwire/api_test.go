package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeAPIAsUsersDo: `toolwire serve --api` with a tenant's token in
// its configuration; the results are followed with `curl -N` while the
// stream is posted with `curl --data-binary` (plain HTTP when curl is
// missing), then `toolwire top --once --json` reports the turn. A wrong
// token gets 401, and an API off loopback with no tokens is refused.
func TestServeAPIAsUsersDo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	const token = "acme-token-0123456789abcdef"
	if err := os.WriteFile(filepath.Join(dir, "acme.token"), []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeTemp(t, "toolwire.json", `{"api": {"tenants": {"acme": {"token_file": "`+filepath.Join(dir, "acme.token")+`"}}}}`)
	natsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	api := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	p := startToolwire(t, "serve", "--config", cfg, "--listen", natsAddr, "--http", "", "--api", api,
		"--store", filepath.Join(dir, "data"), "--workdir", dir)
	p.waitLine(t, "HTTP API listening", 60*time.Second)
	base := "http://" + api
	stream, err := filepath.Abs("../../examples/python/stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	auth := "Authorization: Bearer " + token
	var results, posted []byte
	if curl, err := exec.LookPath("curl"); err == nil {
		follow := exec.CommandContext(ctx, curl, "-sSN", "-H", auth, base+"/v1/turns/T/results")
		var out bytes.Buffer
		follow.Stdout = &out
		if err := follow.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // the follower is connected first, as a user's would be
		posted, err = exec.CommandContext(ctx, curl, "-sS", "--fail-with-body", "-H", auth, "-H", "Content-Type: text/event-stream",
			"--data-binary", "@"+stream, base+"/v1/turns/T/stream?format=anthropic").CombinedOutput()
		if err != nil {
			t.Fatalf("curl POST: %v: %s", err, posted)
		}
		if err := follow.Wait(); err != nil {
			t.Fatalf("curl -N: %v: %s", err, out.Bytes())
		}
		results = out.Bytes()
	} else {
		t.Log("curl is not on PATH: the same requests go by net/http")
		body, _ := os.ReadFile(stream)
		posted = do(t, ctx, "POST", base+"/v1/turns/T/stream?format=anthropic", token, body, http.StatusOK)
		results = do(t, ctx, "GET", base+"/v1/turns/T/results", token, nil, http.StatusOK)
	}
	if !strings.Contains(string(posted), `"calls":3`) {
		t.Errorf("POST answered %s", posted)
	}
	text := string(results)
	i0, i1, i2, done := strings.Index(text, "id: 0\n"), strings.Index(text, "id: 1\n"), strings.Index(text, "id: 2\n"), strings.Index(text, "event: done")
	if i0 < 0 || i1 < i0 || i2 < i1 || done < i2 || !strings.Contains(text, `"content":"second"`) {
		t.Fatalf("results not in call order, or incomplete:\n%s", text)
	}

	out, err := exec.CommandContext(ctx, sharedBinary(t), "top", "--nats", "nats://"+natsAddr, "--once", "--json").Output()
	if err != nil {
		t.Fatalf("top: %v", err)
	}
	var snap struct {
		Turns []struct {
			Tenant, Turn string
			Total, Done  int
			Finished     bool
		}
		Consumers []struct{ Stage string }
	}
	if err := json.Unmarshal(out, &snap); err != nil {
		t.Fatalf("top --json: %v\n%s", err, out)
	}
	found := false
	for _, tr := range snap.Turns {
		found = found || (tr.Tenant == "acme" && tr.Turn == "T" && tr.Total == 3 && tr.Done == 3 && tr.Finished)
	}
	if !found || len(snap.Consumers) < 3 {
		t.Errorf("top does not report the turn:\n%s", out)
	}

	if b := do(t, ctx, "GET", base+"/v1/turns/T/results", "wrong-token-0123456789abcdef", nil, http.StatusUnauthorized); strings.Contains(string(b), "second") {
		t.Errorf("a wrong token saw results: %s", b)
	}

	// No tokens and a public address: refused, saying why.
	open := startToolwire(t, "serve", "--listen", fmt.Sprintf("127.0.0.1:%d", freePort(t)), "--http", "",
		"--api", fmt.Sprintf("0.0.0.0:%d", freePort(t)), "--store", filepath.Join(dir, "data2"))
	if err := open.wait(t, 60*time.Second); err == nil || !strings.Contains(open.out(), "not a loopback address") {
		t.Errorf("an open API off loopback: %v\n%s", err, open.out())
	}
}

// do sends one request and checks its status.
func do(t *testing.T, ctx context.Context, method, url, token string, body []byte, want int) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, url, resp.StatusCode, want, b)
	}
	return b
}
