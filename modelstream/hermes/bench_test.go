package hermes

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream"
)

// benchStream builds a realistic turn of about 1 MB: a think block that
// mentions tags, prose with the odd '<', then tool calls with sizeable
// arguments in both key orders and as a Granite string.
func benchStream() []byte {
	var b bytes.Buffer
	b.WriteString("<think>\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "Step %d: if x < %d I would emit <tool_call> here, but not yet.\n", i, i)
	}
	b.WriteString("</think>\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "Some prose, part %d, about the plan: a<b and <em>emphasis</em>. ", i)
	}
	content := strings.Repeat(`line: fmt.Println(\"héllo\")\n`, 800)
	for i := range 16 {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"src/f%d.go\", \"content\": \"%s\"}}\n</tool_call>\n", i, content)
		case 1:
			fmt.Fprintf(&b, "<tool_call>\n{\"arguments\": {\"path\": \"src/f%d.go\", \"content\": \"%s\"}, \"name\": \"write_file\"}\n</tool_call>\n", i, content)
		case 2:
			fmt.Fprintf(&b, "<tool_call>\n```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"src/f%d.go\", \"content\": \"%s\"}}\n```\n</tool_call>\n", i, content)
		}
	}
	b.WriteString("<|im_end|>")
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

// BenchmarkParseFixtures parses the real samples, small as they are, to
// show the per-stream overhead next to BenchmarkParse's bulk figure.
func BenchmarkParseFixtures(b *testing.B) {
	for _, fx := range fixtures {
		b.Run(fx.file, func(b *testing.B) {
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

// TestBenchStream keeps the benchmark honest: its text must parse to 16
// complete calls.
func TestBenchStream(t *testing.T) {
	data := benchStream()
	res := parse(t, bytes.NewReader(data))
	if len(res.Calls) != 16 || res.Ends[0].StopReason != "im_end" {
		t.Fatalf("got %d calls and End %+v, want 16 and im_end", len(res.Calls), res.Ends[0])
	}
	for _, c := range res.Calls {
		if !c.Complete || c.Name != "write_file" {
			t.Fatalf("call %d = %q complete %v: %s", c.Seq, c.Name, c.Complete, c.Err)
		}
	}
	t.Logf("bench text: %d bytes", len(data))
}
