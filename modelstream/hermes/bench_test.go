package hermes

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
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
	streamtest.BenchParse(b, New(), benchStream())
}

// BenchmarkParseFixtures parses the real samples, small as they are, to
// show the per-stream overhead next to BenchmarkParse's bulk figure.
func BenchmarkParseFixtures(b *testing.B) {
	streamtest.BenchFixtures(b, func() modelstream.Parser { return New() }, fixtureDir, "", fixtures, fixtureFile)
}

// TestBenchStream keeps the benchmark honest: its text must parse to 16
// complete calls.
func TestBenchStream(t *testing.T) {
	data := benchStream()
	res := parse(t, bytes.NewReader(data))
	streamtest.CheckBenchStream(t, res, 16)
	if res.Ends[0].StopReason != "im_end" {
		t.Fatalf("End %+v, want im_end", res.Ends[0])
	}
	for _, c := range res.Calls {
		if c.Name != "write_file" {
			t.Fatalf("call %d = %q, want write_file", c.Seq, c.Name)
		}
	}
	t.Logf("bench text: %d bytes", len(data))
}
