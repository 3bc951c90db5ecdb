package schemas

import (
	"strings"
	"testing"
)

// BenchmarkEncodeDecodeToolResult measures one result through the default
// (msgpack) codec and back, headers included: the per-event cost every stage pays.
func BenchmarkEncodeDecodeToolResult(b *testing.B) {
	data := &ToolResult{
		Seq: 3, ToolUseID: "toolu_01A09q90qw90lq917835lq9", Name: "Bash",
		Content:   strings.Repeat("0123456789abcdef", 64), // 1 KiB
		StartedAt: t0, FinishedAt: t1, Worker: "exec-default-7f3a", Attempt: 1, Safe: true,
	}
	meta := Meta{ID: "evt-1", Source: "toolwire/executor", Tenant: "acme", Turn: "turn-1", Seq: 3, Time: t1}
	b.ReportAllocs()
	for b.Loop() {
		h, body, err := Encode(meta, data)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := Decode(h, body); err != nil {
			b.Fatal(err)
		}
	}
}
