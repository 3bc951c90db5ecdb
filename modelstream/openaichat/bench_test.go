package openaichat

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
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
	streamtest.BenchParse(b, New(), benchStream())
}

// BenchmarkParseFixtures parses the real captures, small as they are, to
// show the per-stream overhead next to BenchmarkParse's bulk figure.
func BenchmarkParseFixtures(b *testing.B) {
	streamtest.BenchFixtures(b, func() modelstream.Parser { return New() }, fixtureDir, "openai_chat_", fixtures, fixtureFile)
}

// TestBenchStream keeps the benchmark honest: its stream must parse to four
// complete calls.
func TestBenchStream(t *testing.T) {
	data := benchStream()
	streamtest.CheckBenchStream(t, parse(t, bytes.NewReader(data)), 4)
	if len(data) < 1<<20 {
		t.Errorf("bench stream is %d bytes, want about 1 MB", len(data))
	}
}
