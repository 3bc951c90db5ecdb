package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/embedded"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/modelstream/anthropic"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/tool/testtools"
)

// maxPayload is the test server's max_payload: small, so that an argument
// over it costs little to build and to refuse.
const maxPayload = 256 << 10

// oversizeEnv starts a server with a small max_payload, a pipeline with the
// test tools on it, and a client.
func oversizeEnv(t *testing.T) *client.Client {
	t.Helper()
	srv := testenv.ServerWith(t, embedded.Options{MaxPayload: maxPayload})
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, testtools.Tools()...)})
	return testenv.Client(t, srv)
}

// bigInput is a Noop input larger than the server's max_payload.
func bigInput() json.RawMessage {
	return json.RawMessage(`{"blob":"` + strings.Repeat("x", maxPayload+(44<<10)) + `"}`)
}

// checkRefusal checks that err reports call seq (id) as refused for its
// size, by the server's limit, in words that name both numbers.
func checkRefusal(t *testing.T, err error, seq int, id string) {
	t.Helper()
	if !errors.Is(err, nats.ErrMaxPayload) {
		t.Fatalf("error %v does not wrap nats.ErrMaxPayload", err)
	}
	var tl *client.CallTooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("error %v is not a *client.CallTooLargeError", err)
	}
	if tl.Seq != seq || tl.ToolUseID != id || tl.Name != "Noop" || tl.MaxPayload != maxPayload || tl.Size <= maxPayload {
		t.Errorf("refusal %+v; want seq %d, id %s, a size over %d", *tl, seq, id, maxPayload)
	}
	for _, want := range []string{fmt.Sprintf("call %d (%s, Noop)", seq, id), fmt.Sprintf("%d bytes", tl.Size), fmt.Sprintf("max_payload of %d bytes", maxPayload)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// checkTurn reads the turn and checks that every call has its result, the
// refused one an error saying why, and that the turn is done.
func checkTurn(t *testing.T, ctx context.Context, cl *client.Client, turn string, n, refused int) []*schemas.ToolResult {
	t.Helper()
	results, done, err := testenv.ReadTurn(ctx, cl, turn)
	if err != nil {
		t.Fatalf("turn %s: %v (%d results)", turn, err, len(results))
	}
	if len(results) != n || done.Results != n {
		t.Fatalf("%d results, turn_done %d; want %d", len(results), done.Results, n)
	}
	for i, r := range results {
		if i == refused {
			if !r.IsError || !strings.Contains(r.Content, fmt.Sprintf("max_payload of %d bytes", maxPayload)) || r.Worker != "router" {
				t.Errorf("refused call's result: %+v", *r)
			}
			continue
		}
		if r.IsError {
			t.Errorf("result %d is an error: %s", i, r.Content)
		}
	}
	return results
}

// TestSubmitCallsOverMaxPayload: a call whose event the server refuses for
// its size fails the submission at once, naming the call and both sizes,
// and the turn still ends: the refused call gets an error result, the
// others run.
func TestSubmitCallsOverMaxPayload(t *testing.T) {
	cl := oversizeEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	calls := []client.Call{
		{ID: "small_0", Name: "Noop", Input: json.RawMessage(`{"x":0}`)},
		{ID: "big_1", Name: "Noop", Input: bigInput()},
		{ID: "small_2", Name: "Noop", Input: json.RawMessage(`{"x":2}`)},
	}
	start := time.Now()
	err := cl.SubmitCalls(ctx, "t_calls", calls, client.TurnOptions{})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("SubmitCalls took %v", took)
	}
	checkRefusal(t, err, 1, "big_1")
	results := checkTurn(t, ctx, cl, "t_calls", 3, 1)
	if results[2].Content != `{"x":2}` {
		t.Errorf("the call after the refused one: %q", results[2].Content)
	}
}

// TestSubmitStreamOverMaxPayload: the same through a model's stream; the
// calls after the refused one are still sent, and the turn ends with all.
func TestSubmitStreamOverMaxPayload(t *testing.T) {
	cl := oversizeEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var blocks []testenv.ToolBlock
	for i, in := range []json.RawMessage{json.RawMessage(`{"x":0}`), bigInput(), json.RawMessage(`{"x":2}`)} {
		blocks = append(blocks, testenv.ToolBlock{ID: fmt.Sprintf("toolu_%d", i), Name: "Noop", Args: string(in)})
	}
	stream := testenv.AnthropicStream("msg_big", blocks...)

	sum, err := cl.SubmitStream(ctx, "t_stream", anthropic.New(), strings.NewReader(stream), client.TurnOptions{})
	checkRefusal(t, err, 1, "toolu_1")
	if sum.Calls != 3 || !sum.Ended {
		t.Errorf("summary: %d calls, ended %v; want 3 and the end sent", sum.Calls, sum.Ended)
	}
	checkTurn(t, ctx, cl, "t_stream", 3, 1)
}

// TestSubmitCallOverMaxPayload: an adapter of its own that sends calls one
// by one gets the refusal from SubmitCall; its EndTurn still closes the turn.
func TestSubmitCallOverMaxPayload(t *testing.T) {
	cl := oversizeEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := cl.SubmitCall(ctx, "t_call", 0, client.Call{ID: "big_0", Name: "Noop", Input: bigInput()}, client.TurnOptions{})
	checkRefusal(t, err, 0, "big_0")
	if err := cl.SubmitCall(ctx, "t_call", 1, client.Call{ID: "small_1", Name: "Noop", Input: json.RawMessage(`{}`)}, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTurn(ctx, "t_call", 2, "tool_use"); err != nil {
		t.Fatal(err)
	}
	checkTurn(t, ctx, cl, "t_call", 2, 0)
}
