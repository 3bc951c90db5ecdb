package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// served is a `toolwire serve` process and a connection to its server.
type served struct {
	cmd    *exec.Cmd
	exited chan error
	nc     *nats.Conn
	js     jetstream.JetStream
	cl     *client.Client
}

// startServe runs `toolwire serve` as a real process on its own embedded
// server and waits until its streams exist.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	bin := sharedBinary(t)
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	args = append([]string{"serve", "--listen", addr, "--http", "", "--api", "", "--store", filepath.Join(t.TempDir(), "data"), "--test-tools", "--workdir", t.TempDir()}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &served{cmd: cmd, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-s.exited
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		nc, err := nats.Connect("nats://" + addr)
		if err == nil {
			s.nc = nc
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not listen on %s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Cleanup(s.nc.Close)
	s.js, _ = jetstream.New(s.nc)
	for {
		if _, err := s.js.Stream(context.Background(), subjects.Default().OutStream()); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("serve's streams never appeared")
		}
		time.Sleep(100 * time.Millisecond)
	}
	var err error
	if s.cl, err = client.New(s.nc, client.Config{Space: subjects.Default()}); err != nil {
		t.Fatal(err)
	}
	return s
}

// alive fails the test when the served process has exited.
func (s *served) alive(t *testing.T) {
	t.Helper()
	select {
	case err := <-s.exited:
		s.exited <- err
		t.Fatalf("toolwire serve exited: %v", err)
	default:
	}
}

// raw publishes an event as a hostile producer would: a JSON body with the
// CloudEvents headers written by hand, straight on the input subject.
func (s *served) raw(t *testing.T, turn, kind, typ, body string) {
	t.Helper()
	m := nats.NewMsg(subjects.Default().In(subjects.DefaultTenant, turn, kind))
	m.Header.Set("ce-specversion", "1.0")
	m.Header.Set("ce-id", fmt.Sprintf("hostile-%d", time.Now().UnixNano()))
	m.Header.Set("ce-source", "/hostile")
	m.Header.Set("ce-type", typ)
	m.Header.Set("ce-datacontenttype", "application/json")
	m.Data = []byte(body)
	if _, err := s.js.PublishMsg(context.Background(), m); err != nil {
		t.Fatalf("publish %s: %v", m.Subject, err)
	}
}

// results collects a turn's results until turn_done.
func (s *served) results(t *testing.T, ctx context.Context, turn string) []*schemas.ToolResult {
	t.Helper()
	var out []*schemas.ToolResult
	for d, err := range s.cl.Results(ctx, turn) {
		if err != nil {
			t.Fatalf("turn %s: %v (after %d results)", turn, err, len(out))
		}
		if d.Done != nil {
			return out
		}
		out = append(out, d.Result)
	}
	t.Fatalf("turn %s: results ended without turn_done", turn)
	return nil
}

// deadLetters returns the reasons of the router's dead letters.
func (s *served) deadLetters(t *testing.T, ctx context.Context) []string {
	t.Helper()
	st, err := s.js.Stream(ctx, subjects.Default().DLQStream())
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for seq := uint64(1); ; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			return reasons
		}
		reasons = append(reasons, m.Header.Get(schemas.HeaderDLQSubject)+": "+m.Header.Get(schemas.HeaderDLQReason))
	}
}

// TestHostileEventsAgainstServe publishes the events that once took the
// server down — a huge seq, a turn_end counting a billion calls, an input
// over the limit, an id of 10,000 bytes, a call after its turn's end — at a
// served pipeline. The process lives; each event is dead-lettered with the
// limit it broke, every call that can be named is answered in its place,
// and a good turn afterwards completes.
func TestHostileEventsAgainstServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	s := startServe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	use := schemas.TypeToolUse
	end := schemas.TypeTurnEnd

	// 71 bytes that once grew the lease by a slot per seq until the process died.
	s.raw(t, "h_seq", subjects.KindUse, use, `{"seq":1000000000,"tool_use_id":"t","name":"Noop","input":{},"complete":true}`)
	// A turn_end counting a billion calls: the turn is closed at the calls seen.
	s.raw(t, "h_calls", subjects.KindUse, use, `{"seq":0,"tool_use_id":"c0","name":"Noop","input":{"a":1},"complete":true}`)
	s.raw(t, "h_calls", subjects.KindEnd, end, `{"calls":1000000000}`)
	// An input over max_input_bytes (2 MiB, under the server's payload limit).
	big := `{"seq":0,"tool_use_id":"b0","name":"Noop","input":{"x":"` + strings.Repeat("a", 2<<20) + `"},"complete":true}`
	s.raw(t, "h_input", subjects.KindUse, use, big)
	s.raw(t, "h_input", subjects.KindEnd, end, `{"calls":1}`)
	// An id of 10,000 bytes.
	s.raw(t, "h_id", subjects.KindUse, use, `{"seq":0,"tool_use_id":"`+strings.Repeat("i", 10000)+`","name":"Noop","input":{},"complete":true}`)
	s.raw(t, "h_id", subjects.KindEnd, end, `{"calls":1}`)
	// A call at the count its turn's end gave: it must not run.
	marker := filepath.Join(t.TempDir(), "late-ran")
	s.raw(t, "h_late", subjects.KindUse, use, `{"seq":0,"tool_use_id":"l0","name":"Noop","input":{},"complete":true}`)
	s.raw(t, "h_late", subjects.KindEnd, end, `{"calls":1}`)

	got := s.results(t, ctx, "h_calls")
	if len(got) != 1 || got[0].IsError || got[0].Content != `{"a":1}` {
		t.Errorf("h_calls: want the one call seen, answered normally; got %+v", got)
	}
	got = s.results(t, ctx, "h_input")
	if len(got) != 1 || !got[0].IsError || !strings.Contains(got[0].Content, "max_input_bytes") || got[0].ToolUseID != "b0" {
		t.Errorf("h_input: want an error result naming max_input_bytes for b0; got %+v", got)
	}
	got = s.results(t, ctx, "h_id")
	if len(got) != 1 || !got[0].IsError || !strings.Contains(got[0].Content, "max_id_bytes") {
		t.Errorf("h_id: want an error result naming max_id_bytes; got %+v", got)
	}
	got = s.results(t, ctx, "h_late")
	if len(got) != 1 || got[0].IsError {
		t.Errorf("h_late: %+v", got)
	}
	s.raw(t, "h_late", subjects.KindUse, use, `{"seq":1,"tool_use_id":"l1","name":"Bash","input":{"command":"touch `+marker+`"},"complete":true}`)

	// The server is alive and a good turn completes.
	calls := []client.Call{{ID: "g0", Name: "Noop", Input: json.RawMessage(`{"ok":true}`)}}
	if err := s.cl.SubmitCalls(ctx, "h_good", calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := s.results(t, ctx, "h_good"); len(got) != 1 || got[0].IsError {
		t.Errorf("good turn: %+v", got)
	}
	s.alive(t)

	want := map[string]string{
		"h_seq":   "max_calls_per_turn",
		"h_calls": "max_calls_per_turn",
		"h_input": "max_input_bytes",
		"h_id":    "max_id_bytes",
		"h_late":  "came after its turn's end",
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		reasons := s.deadLetters(t, ctx)
		missing := []string{}
		for turn, text := range want {
			found := false
			for _, r := range reasons {
				found = found || strings.Contains(r, "."+turn+".") && strings.Contains(r, text)
			}
			if !found {
				missing = append(missing, turn+" ("+text+")")
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no dead letter for %v; dead letters: %q", missing, reasons)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the call after its turn's end ran")
	}
	s.alive(t)
}
