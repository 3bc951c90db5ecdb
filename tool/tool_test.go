package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolwire/toolwire/tool"
)

func call(context.Context, json.RawMessage, tool.TurnContext, tool.Progress) (tool.Result, error) {
	return tool.Result{Content: "ok"}, nil
}

// A tool defined with only a name, a schema and a call is unsafe, writing,
// blocking on interrupt, and capped at the default.
func TestBuildFailsClosed(t *testing.T) {
	tl, err := tool.Build(tool.Definition{Name: "T", InputSchema: json.RawMessage(`{"type":"object"}`), Call: call})
	if err != nil {
		t.Fatal(err)
	}
	in := json.RawMessage(`{}`)
	if tl.IsConcurrencySafe(in) || tl.IsReadOnly(in) || tl.IsDestructive(in) || tl.CancelsSiblings() {
		t.Error("defaults are not fail-closed")
	}
	if tl.InterruptBehavior() != tool.InterruptBlock || tl.MaxResultChars() != tool.DefaultMaxResultChars || tl.TimeoutFor(in) != 0 {
		t.Error("wrong defaults")
	}
}

func TestPredicateFailuresAreUnsafe(t *testing.T) {
	panics := func(json.RawMessage) (bool, error) { panic("boom") }
	errs := func(json.RawMessage) (bool, error) { return true, errors.New("cannot tell") }
	for name, p := range map[string]tool.Predicate{"panic": panics, "error": errs} {
		tl := tool.MustBuild(tool.Definition{Name: "T", Call: call, ConcurrencySafe: p, ReadOnly: p})
		if tl.IsConcurrencySafe(nil) || tl.IsReadOnly(nil) {
			t.Errorf("%s predicate counted as safe", name)
		}
	}
}

func TestCallPanicBecomesError(t *testing.T) {
	tl := tool.MustBuild(tool.Definition{Name: "T", Call: func(context.Context, json.RawMessage, tool.TurnContext, tool.Progress) (tool.Result, error) {
		panic("bad tool")
	}})
	if _, err := tl.Call(context.Background(), nil, tool.TurnContext{}, nil); err == nil {
		t.Fatal("panic was not turned into an error")
	}
}

func TestTimeoutFor(t *testing.T) {
	tl := tool.MustBuild(tool.Definition{Name: "T", Call: call, Timeout: time.Minute,
		CallTimeout: func(in json.RawMessage) time.Duration {
			if string(in) == `{"t":1}` {
				return time.Second
			}
			return 0
		}})
	if tl.TimeoutFor(json.RawMessage(`{"t":1}`)) != time.Second || tl.TimeoutFor(json.RawMessage(`{}`)) != time.Minute {
		t.Error("per-call timeout not honoured")
	}
}

func TestBuildRejects(t *testing.T) {
	for _, d := range []tool.Definition{{Call: call}, {Name: "T"}, {Name: "T", Call: call, InputSchema: json.RawMessage(`{`)}} {
		if _, err := tool.Build(d); !errors.Is(err, tool.ErrInvalidDefinition) {
			t.Errorf("Build(%+v) = %v", d.Name, err)
		}
	}
}

func TestRegistry(t *testing.T) {
	a := tool.MustBuild(tool.Definition{Name: "B", Aliases: []string{"b"}, Call: call})
	b := tool.MustBuild(tool.Definition{Name: "A", Call: call})
	r, err := tool.NewRegistry(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := r.Lookup("b"); !ok || got != a {
		t.Error("alias not resolved")
	}
	if ts := r.Tools(); ts[0].Name() != "A" || ts[1].Name() != "B" {
		t.Error("not sorted by name")
	}
	if err := r.Add(tool.MustBuild(tool.Definition{Name: "b", Call: call})); !errors.Is(err, tool.ErrDuplicateTool) {
		t.Errorf("duplicate alias accepted: %v", err)
	}
}
