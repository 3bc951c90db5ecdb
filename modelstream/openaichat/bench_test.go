package openaichat

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream"
)

// benchStream builds a realistic stream of about 1 MB: content deltas, then
// tool calls whose arguments arrive in many small fragments, with the extra
// fields (usage, obfuscation, logprobs) of real captures.
func benchStream() []byte {
	var b bytes.Buffer
	event := func(data string) { fmt.Fprintf(&b, "data: %s\n\n", data) }
	event(roleOnly)
	for i := range 300 {
		event(content(fmt.Sprintf("Some prose, part %d, about the plan. ", i)))
	}
	for call := range 4 {
		event(start(call, fmt.Sprintf("call_%024d", call), "write_file"))
		event(args(call, `{"path": "src/main.go", "content": "`))
		for i := range 1500 {
			event(args(call, fmt.Sprintf(`line %d: fmt.Println(\"héllo\")\n`, i)))
		}
		event(args(call, `"}`))
	}
	event(finish("tool_calls"))
	event(usage)
	event(done)
	return b.Bytes()
}

func BenchmarkParse(b *testing.B) {
	data := benchStream()
	var calls int
	h := modelstream.HandlerFuncs{
		OnCall: func(_ context.Context, c modelstream.Call) error {
			if !c.Complete {
				return fmt.Errorf("call %d incomplete: %s", c.Seq, c.Err)
			}
			calls++
			return nil
		},
	}
	p := New()
	ctx := context.Background()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Parse(ctx, bytes.NewReader(data), h); err != nil {
			b.Fatal(err)
		}
	}
	if calls == 0 {
		b.Fatal("no calls parsed")
	}
}

// BenchmarkParseFixtures parses the real captures, small as they are, to
// show the per-stream overhead next to BenchmarkParse's bulk figure.
func BenchmarkParseFixtures(b *testing.B) {
	for _, fx := range fixtures {
		b.Run(strings.TrimPrefix(fx.file, "openai_chat_"), func(b *testing.B) {
			data := loadFixture(b, fx.file)
			h := modelstream.HandlerFuncs{}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := New().Parse(context.Background(), bytes.NewReader(data), h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestBenchStream keeps the benchmark honest: its stream must parse to four
// complete calls.
func TestBenchStream(t *testing.T) {
	data := benchStream()
	res := parse(t, bytes.NewReader(data))
	if len(res.Calls) != 4 {
		t.Fatalf("got %d calls, want 4", len(res.Calls))
	}
	for _, c := range res.Calls {
		if !c.Complete {
			t.Fatalf("call %d incomplete: %s", c.Seq, c.Err)
		}
	}
	if len(data) < 1<<20 {
		t.Errorf("bench stream is %d bytes, want about 1 MB", len(data))
	}
}
