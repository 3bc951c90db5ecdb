package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// TestDLQCommands drives `toolwire dlq` against a served pipeline, as an
// operator would: a hostile event is dead-lettered; list names it with its
// reason, show prints it whole, replay sends it back (the router gives up
// on it again, so there are two letters), and a sequence that holds no
// letter is an error naming it.
func TestDLQCommands(t *testing.T) {
	s := startServe(t)
	url := s.nc.ConnectedUrl()
	s.raw(t, "dlq_turn", subjects.KindUse, schemas.TypeToolUse, `{"seq":0,"tool_use_id":"toolu_0","name":"Noop","input":{},"complete":true,"calls":"one"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	deadline := time.Now().Add(10 * time.Second)
	for len(s.deadLetters(t, ctx)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the hostile event was not dead-lettered")
		}
		time.Sleep(50 * time.Millisecond)
	}
	dlq := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, sharedBinary(t), append([]string{"dlq"}, append(args, "--nats", url)...)...).CombinedOutput()
		return string(out), err
	}
	out, err := dlq("list")
	if err != nil || !strings.Contains(out, "default/router") || !strings.Contains(out, "tw.default.in.dlq_turn.use") || !strings.Contains(out, "1 dead letters") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	seq := strings.Fields(out)[0]
	out, err = dlq("show", seq)
	if err != nil || !strings.Contains(out, "does not decode") || !strings.Contains(out, `\"calls\":\"one\"`) || !strings.Contains(out, "Tw-Dlq-Reason") {
		t.Fatalf("show %s: %v\n%s", seq, err, out)
	}
	out, err = dlq("replay", seq)
	if err != nil || !strings.Contains(out, "replayed to tw.default.in.dlq_turn.use") {
		t.Fatalf("replay %s: %v\n%s", seq, err, out)
	}
	deadline = time.Now().Add(10 * time.Second)
	for len(s.deadLetters(t, ctx)) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the replayed event was not dead-lettered again: %q", s.deadLetters(t, ctx))
		}
		time.Sleep(50 * time.Millisecond)
	}
	out, err = dlq("list", "--json", "--stage", "router")
	if err != nil || strings.Count(out, `"stage":"router"`) != 2 {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	if out, err = dlq("replay", "999"); err == nil || !strings.Contains(out, "no such dead letter at 999") {
		t.Fatalf("replay of nothing: %v\n%s", err, out)
	}
	if out, err = dlq("show", "x"); err == nil || !strings.Contains(out, `"x" is not a dead letter's sequence`) {
		t.Fatalf("show x: %v\n%s", err, out)
	}
	s.alive(t)
}
