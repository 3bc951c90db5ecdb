package testtools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/tool"
)

func call(t *testing.T, ctx context.Context, tl *tool.Tool, input string) (tool.Result, error) {
	t.Helper()
	return tl.Call(ctx, json.RawMessage(input), tool.TurnContext{}, nil)
}

func TestNoopEchoesCompactInput(t *testing.T) {
	n := Noop()
	res, err := call(t, context.Background(), n, "{ \"a\" : [1, 2],\n \"b\": \"x y\" }")
	if err != nil || res.IsError || res.Content != `{"a":[1,2],"b":"x y"}` {
		t.Fatalf("got %+v, %v", res, err)
	}
	if res, _ := call(t, context.Background(), n, "{bad"); !res.IsError {
		t.Errorf("invalid JSON: got %+v, want an error result", res)
	}
	in := json.RawMessage(`{}`)
	if !n.IsConcurrencySafe(in) || !n.IsReadOnly(in) || n.IsDestructive(in) || n.CancelsSiblings() {
		t.Error("Noop must be safe, read-only, not destructive and not cancel siblings")
	}
}

func TestSleep(t *testing.T) {
	s := Sleep()
	start := time.Now()
	res, err := call(t, context.Background(), s, `{"ms":50}`)
	if err != nil || res.IsError || res.Content != "slept 50 ms" {
		t.Fatalf("got %+v, %v", res, err)
	}
	if elapsed := time.Since(start); elapsed < 50*time.Millisecond {
		t.Errorf("returned after %v, before 50ms", elapsed)
	}
	res, err = call(t, context.Background(), s, `{"ms":10,"fail":true}`)
	if err != nil || !res.IsError || res.Content != "sleep failed as asked after 10 ms" {
		t.Fatalf("fail: got %+v, %v", res, err)
	}
	if s.CancelsSiblings() {
		t.Error("Sleep must not cancel siblings")
	}
}

func TestSleepSafety(t *testing.T) {
	s := Sleep()
	cases := []struct {
		input string
		safe  bool
	}{
		{`{"ms":1,"safe":true}`, true},
		{`{"ms":1,"safe":false}`, false},
		{`{"ms":1}`, false},
		{`not json`, false},
	}
	for _, tc := range cases {
		in := json.RawMessage(tc.input)
		if s.IsConcurrencySafe(in) != tc.safe || s.IsReadOnly(in) != tc.safe {
			t.Errorf("%s: safe %v read-only %v, want %v", tc.input, s.IsConcurrencySafe(in), s.IsReadOnly(in), tc.safe)
		}
	}
}

func TestSleepCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := call(t, ctx, Sleep(), `{"ms":30000}`)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "sleep cancelled after") {
		t.Fatalf("err = %v, want a cancellation", err)
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Fatalf("returned %v after start, want soon after the 50ms cancellation", elapsed)
	}
}

func TestTools(t *testing.T) {
	tools := Tools()
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name())
	}
	if strings.Join(names, ",") != "Chdir,Noop,Sleep" {
		t.Fatalf("Tools() = %v, want Chdir, Noop and Sleep", names)
	}
}
