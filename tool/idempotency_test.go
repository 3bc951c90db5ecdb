package tool_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

// TestIdempotencyKey: the key depends on the call's tenant, turn, tool_use
// id, tool and input, and on nothing else: two spellings of the same
// arguments (key order, spaces, escapes) give one key; every other part
// changed gives another; parts cannot run into each other.
func TestIdempotencyKey(t *testing.T) {
	in := json.RawMessage(`{"to":"a@b.c","amount":12.50,"tags":["x","y"],"n":9007199254740993}`)
	key := tool.IdempotencyKey("acme", "turn_1", "toolu_1", "Pay", in)
	if !regexp.MustCompile(`^twk1_[0-9a-f]{32}$`).MatchString(key) {
		t.Fatalf("key %q", key)
	}
	same := []json.RawMessage{
		json.RawMessage(` { "n" : 9007199254740993, "tags":[ "x","y" ], "amount":12.50, "to":"a@b.c" } `),
		json.RawMessage(`{"to":"a\u0040b.c","amount":12.50,"tags":["x","y"],"n":9007199254740993}`),
	}
	for _, s := range same {
		if got := tool.IdempotencyKey("acme", "turn_1", "toolu_1", "Pay", s); got != key {
			t.Errorf("%s: key %s, want %s", s, got, key)
		}
	}
	other := map[string]string{
		"tenant":      tool.IdempotencyKey("acme2", "turn_1", "toolu_1", "Pay", in),
		"turn":        tool.IdempotencyKey("acme", "turn_2", "toolu_1", "Pay", in),
		"tool_use id": tool.IdempotencyKey("acme", "turn_1", "toolu_2", "Pay", in),
		"tool":        tool.IdempotencyKey("acme", "turn_1", "toolu_1", "Refund", in),
		"input":       tool.IdempotencyKey("acme", "turn_1", "toolu_1", "Pay", json.RawMessage(`{"to":"a@b.c","amount":12.5,"tags":["x","y"],"n":9007199254740993}`)),
		"parts moved": tool.IdempotencyKey("acm", "eturn_1", "toolu_1", "Pay", in),
	}
	seen := map[string]string{key: "the call"}
	for what, k := range other {
		if prev, ok := seen[k]; ok {
			t.Errorf("another %s gives the key of %s", what, prev)
		}
		seen[k] = what
	}
}
