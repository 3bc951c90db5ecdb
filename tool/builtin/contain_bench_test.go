package builtin

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolwire/toolwire/tool"
	"github.com/toolwire/toolwire/tool/builtin/sandbox"
)

// BenchmarkBashContained is the cost of one contained call of a trivial
// command under each backend (and the init alone), for the figures in
// docs/operations.md.
func BenchmarkBashContained(b *testing.B) {
	raw, _ := json.Marshal(map[string]any{"command": "echo hi"})
	for _, backend := range []sandbox.Backend{sandbox.BackendNone, sandbox.BackendLandlock, sandbox.BackendBwrap} {
		b.Run(string(backend), func(b *testing.B) {
			p := sandbox.Policy{Sandbox: backend}
			if c := p.Containment(); c.Backend != backend {
				b.Skip(c.Status)
			}
			bash, dir := BashWith(p), b.TempDir()
			for b.Loop() {
				res, err := bash.Call(context.Background(), raw, tool.TurnContext{WorkDir: dir}, nil)
				if err != nil || res.IsError || res.Content != "hi" {
					b.Fatalf("%+v, %v", res, err)
				}
			}
		})
	}
}
