package anthropic

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

// benchStream builds a realistic stream of about 1 MB: a text block, then
// tool calls whose arguments arrive in many small deltas, with the event
// lines, space padding and pings of real captures.
func benchStream() []byte {
	var b bytes.Buffer
	event := func(typ, data string) {
		fmt.Fprintf(&b, "event: %s\ndata: %s%s\n\n", typ, data, strings.Repeat(" ", b.Len()%13))
	}
	event("message_start", msgStart)
	event("content_block_start", textStart(0))
	for i := range 300 {
		event("content_block_delta", textDelta(0, fmt.Sprintf("Some prose, part %d, about the plan. ", i)))
		if i%50 == 0 {
			event("ping", ping)
		}
	}
	event("content_block_stop", stop(0))
	for call := 1; call <= 4; call++ {
		event("content_block_start", toolStart(call, fmt.Sprintf("toolu_%024d", call), "write_file"))
		event("content_block_delta", inputDelta(call, ""))
		event("content_block_delta", inputDelta(call, `{"path": "src/main.go", "content": "`))
		for i := range 1500 {
			event("content_block_delta", inputDelta(call, fmt.Sprintf(`line %d: fmt.Println(\"héllo\")\n`, i)))
		}
		event("content_block_delta", inputDelta(call, `"}`))
		event("content_block_stop", stop(call))
	}
	event("message_delta", msgDelta("tool_use"))
	event("message_stop", msgStop)
	return b.Bytes()
}

func BenchmarkParse(b *testing.B) {
	streamtest.BenchParse(b, New(), benchStream())
}

// BenchmarkParseFixtures parses the real captures, small as they are, to
// show the per-stream overhead next to BenchmarkParse's bulk figure.
func BenchmarkParseFixtures(b *testing.B) {
	streamtest.BenchFixtures(b, func() modelstream.Parser { return New() }, fixtureDir, "anthropic_", fixtures, fixtureFile)
}

// TestBenchStream keeps the benchmark honest: its stream must parse to four
// complete calls.
func TestBenchStream(t *testing.T) {
	streamtest.CheckBenchStream(t, parse(t, bytes.NewReader(benchStream())), 4)
}
