package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/internal/testenv"
	"github.com/toolwire/toolwire/pipeline"
	"github.com/toolwire/toolwire/subjects"
	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin"
)

// TestIdempotencyKeyReachesTheCall: a Bash call run by the pipeline finds
// its idempotency key in TOOLWIRE_IDEMPOTENCY_KEY, the key derived from
// its tenant, turn, tool_use id, tool and input; the model's arguments do
// not carry it, and two calls of one turn get two keys.
func TestIdempotencyKeyReachesTheCall(t *testing.T) {
	srv := testenv.Server(t)
	testenv.Pipeline(t, srv, pipeline.Config{Tools: testenv.Registry(t, builtin.Tools()...), WorkDir: t.TempDir()})
	cl := testenv.Client(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	input := json.RawMessage(`{"command":"printf %s \"$TOOLWIRE_IDEMPOTENCY_KEY\""}`)
	turn := client.NewTurnID()
	calls := []client.Call{{ID: "toolu_pay", Name: "Bash", Input: input}, {ID: "toolu_mail", Name: "Bash", Input: input}}
	if err := cl.SubmitCalls(ctx, turn, calls, client.TurnOptions{}); err != nil {
		t.Fatal(err)
	}
	results, _, err := testenv.ReadTurn(ctx, cl, turn)
	if err != nil || len(results) != 2 {
		t.Fatalf("%v, %d results", err, len(results))
	}
	for i, id := range []string{"toolu_pay", "toolu_mail"} {
		want := tool.IdempotencyKey(subjects.DefaultTenant, turn, id, "Bash", input)
		if results[i].Content != want {
			t.Errorf("call %s: key %q, want %q", id, results[i].Content, want)
		}
	}
	if results[0].Content == results[1].Content {
		t.Error("two calls got one key")
	}
}
