package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/modelstream/anthropic"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// TestBadTurnIDs: every method that takes a turn id refuses one that is
// not a single subject token, before anything is sent or subscribed, with
// an error that names the method, the turn and what is wrong with it.
// Unchecked, "a.b" would publish where no stream listens, and "*" or ">"
// would follow or steer every turn of the tenant.
func TestBadTurnIDs(t *testing.T) {
	srv := testenv.Server(t)
	testenv.Pipeline(t, srv, pipeline.Config{Routers: -1, Executors: -1, Reorders: -1}) // the streams, no stage
	cl := testenv.Client(t, srv)
	ctx := testCtx(t)
	stream := testenv.AnthropicStream("msg_bad", testenv.ToolBlock{ID: "toolu_a", Name: "Noop", Args: `{}`})

	methods := []struct {
		op   string
		call func(turn string) error
	}{
		{"submit stream", func(turn string) error {
			_, err := cl.SubmitStream(ctx, turn, anthropic.New(), strings.NewReader(stream), client.TurnOptions{})
			return err
		}},
		{"submit calls", func(turn string) error {
			return cl.SubmitCalls(ctx, turn, []client.Call{noop("a", `{}`)}, client.TurnOptions{})
		}},
		{"submit call", func(turn string) error { return cl.SubmitCall(ctx, turn, 0, noop("a", `{}`), client.TurnOptions{}) }},
		{"end turn", func(turn string) error { return cl.EndTurn(ctx, turn, 1, "tool_use") }},
		{"cancel", func(turn string) error { return cl.Cancel(ctx, turn, "why") }},
		{"discard", func(turn string) error { return cl.Discard(ctx, turn, "why") }},
		{"decide", func(turn string) error { return cl.Decide(ctx, turn, 0, true, "") }},
		{"progress", func(turn string) error {
			stop, err := cl.Progress(turn, func(*schemas.ToolProgress) {})
			if err == nil {
				stop()
			}
			return err
		}},
		{"approvals", func(turn string) error {
			stop, err := cl.Approvals(turn, func(*schemas.ApprovalRequest) {})
			if err == nil {
				stop()
			}
			return err
		}},
		{"results", func(turn string) error {
			// Unchecked, "*" would wait for a turn_done: bound that wait.
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			return resultsError(ctx, cl, turn)
		}},
	}
	bad := map[string]string{
		"":    "turn is empty",
		"a.b": `turn "a.b" has '.'`,
		"a b": `turn "a b" has ' '`,
		"*":   `turn "*" has '*'`,
		">":   `turn ">" has '>'`,
	}
	for _, m := range methods {
		for turn, says := range bad {
			err := m.call(turn)
			if !errors.Is(err, subjects.ErrBadToken) {
				t.Errorf("%s of turn %q: %v; want subjects.ErrBadToken", m.op, turn, err)
				continue
			}
			if want := "client: " + m.op + ": "; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), says) {
				t.Errorf("%s of turn %q: %q; want it to begin %q and say %q", m.op, turn, err, want, says)
			}
		}
	}
	s, err := testenv.JS(t, srv, "test-read").Stream(ctx, subjects.Default().InStream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Errorf("the in stream holds %d events after the refusals", info.State.Msgs)
	}
}

// resultsError ranges over Results of turn and returns its only error:
// refused, the iterator yields that and stops.
func resultsError(ctx context.Context, cl *client.Client, turn string) error {
	var errs []error
	for d, err := range cl.Results(ctx, turn) {
		if err == nil {
			return fmt.Errorf("a delivery %+v", d)
		}
		errs = append(errs, err)
	}
	if len(errs) != 1 {
		return fmt.Errorf("%d errors: %v", len(errs), errors.Join(errs...))
	}
	return errs[0]
}

// TestNewTurnID: turn ids are valid subject tokens and never repeat.
func TestNewTurnID(t *testing.T) {
	seen := map[string]bool{}
	for range 10_000 {
		id := client.NewTurnID()
		if err := subjects.CheckToken("turn", id); err != nil {
			t.Fatalf("NewTurnID %q: %v", id, err)
		}
		if seen[id] {
			t.Fatalf("NewTurnID repeated %q", id)
		}
		seen[id] = true
	}
}
