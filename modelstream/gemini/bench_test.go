package gemini

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

// benchStream builds a realistic stream of about 1 MB with CRLF framing as
// Gemini sends it: text chunks, chunks of parallel whole calls with sizeable
// args, and Vertex streamed calls whose string arguments arrive in many
// small partialArgs parts.
func benchStream() []byte {
	var b bytes.Buffer
	event := func(data string) { fmt.Fprintf(&b, "data: %s\r\n\r\n", data) }
	for i := range 300 {
		event(chunk(fmt.Sprintf(`{"text":"Some prose, part %d, about the plan. "}`, i)))
	}
	content := strings.Repeat(`line: fmt.Println(\"héllo\")\n`, 40)
	for i := range 60 {
		event(chunk(
			call("write_file", fmt.Sprintf(`{"path": "src/f%d.go", "content": "%s"}`, 2*i, content)),
			call("write_file", fmt.Sprintf(`{"path": "src/f%d.go", "content": "%s"}`, 2*i+1, content)),
		))
	}
	for range 4 {
		event(chunk(opener("write_file")))
		event(partial(true, pstr("$.path", "src/main.go", false)))
		for i := range 1500 {
			event(partial(true, pstr("$.content", fmt.Sprintf("line %d: fmt.Println(\"héllo\")\n", i), true)))
		}
		event(partial(true, pstr("$.content", "", false), pval("$.mode", "numberValue", "420")))
		event(chunk(closer))
	}
	event(stop)
	return b.Bytes()
}

func BenchmarkParse(b *testing.B) {
	streamtest.BenchParse(b, New(), benchStream())
}

// BenchmarkParseFixtures parses the real captures, small as they are, to
// show the per-stream overhead next to BenchmarkParse's bulk figure.
func BenchmarkParseFixtures(b *testing.B) {
	streamtest.BenchFixtures(b, func() modelstream.Parser { return New() }, fixtureDir, "gemini_", fixtures, fixtureFile)
}

// TestBenchStream keeps the benchmark honest: its stream must parse to 124
// complete calls.
func TestBenchStream(t *testing.T) {
	data := benchStream()
	res := parse(t, bytes.NewReader(data))
	streamtest.CheckBenchStream(t, res, 124)
	if res.Ends[0].Err != "" {
		t.Fatalf("End %+v, want no error", res.Ends[0])
	}
	last := res.Calls[len(res.Calls)-1]
	if !bytes.Contains(last.Input, []byte(`line 1499: fmt.Println(\"héllo\")\n","mode":420}`)) {
		t.Errorf("streamed call input ends %q", last.Input[max(0, len(last.Input)-80):])
	}
	t.Logf("bench stream: %d bytes", len(data))
}
