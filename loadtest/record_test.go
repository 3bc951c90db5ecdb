package loadtest

import (
	"testing"

	"github.com/toolwire/toolwire/schemas"
)

// TestEndings: a turn's input is all in at its turn_end or discard, or,
// when its calls carry its count, once each of its calls came — a call
// seen twice counts once, and the first count holds.
func TestEndings(t *testing.T) {
	e := newEndings()
	steps := []struct {
		turn  string
		data  schemas.Data
		ended bool
	}{
		{"a", &schemas.ToolUse{Seq: 0}, false},
		{"a", &schemas.TurnEnd{Calls: 1}, true},
		{"a", &schemas.TurnEnd{Calls: 1}, false},
		{"b", &schemas.ToolUse{Seq: 1, Calls: 2}, false},
		{"b", &schemas.ToolUse{Seq: 1, Calls: 2}, false},
		{"b", &schemas.ToolUse{Seq: 0, Calls: 2}, true},
		{"c", &schemas.TurnCancel{}, false},
		{"c", &schemas.TurnDiscard{}, true},
		// Uncounted calls count too; the first count holds.
		{"d", &schemas.ToolUse{Seq: 2}, false},
		{"d", &schemas.ToolUse{Seq: 0, Calls: 3}, false},
		{"d", &schemas.ToolUse{Seq: 1, Calls: 5}, true},
	}
	for i, s := range steps {
		if got := e.add(s.turn, s.data); got != s.ended {
			t.Errorf("step %d (%s %T): ended %v, want %v", i, s.turn, s.data, got, s.ended)
		}
	}
	if e.turns() != 4 || !e.has("b") || e.has("e") {
		t.Errorf("%d turns ended", e.turns())
	}
}
