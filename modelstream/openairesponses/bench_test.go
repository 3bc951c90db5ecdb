package openairesponses

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

// benchStream builds a realistic stream of about 1 MB: a reasoning item, a
// message streamed as text deltas, then function calls whose arguments
// arrive in many small deltas, each closed by arguments.done and
// output_item.done, and a response.completed repeating the whole output.
func benchStream() []byte {
	var b bytes.Buffer
	b.WriteString(created)
	b.WriteString(reasoningAdded)
	b.WriteString(reasoningDone)
	for i := range 300 {
		b.WriteString(ev("response.output_text.delta", fmt.Sprintf(
			`{"type":"response.output_text.delta","content_index":0,"delta":%s,"item_id":"msg_1","logprobs":[],"obfuscation":"abcdef","output_index":1,"sequence_number":%d}`,
			js(fmt.Sprintf("Some prose, part %d, about the plan. ", i)), i)))
	}
	b.WriteString(messageDone)
	var output []string
	for call := range 4 {
		oi, itemID, callID := call+2, fmt.Sprintf("fc_%024d", call), fmt.Sprintf("call_%024d", call)
		b.WriteString(added(oi, itemID, callID, "write_file"))
		var args strings.Builder
		frag := func(s string) {
			args.WriteString(s)
			b.WriteString(delta(oi, itemID, s))
		}
		frag(`{"path": "src/main.go", "content": "`)
		for i := range 1000 {
			frag(fmt.Sprintf(`line %d: fmt.Println(\"héllo\")\n`, i))
		}
		frag(`"}`)
		b.WriteString(argsDone(oi, itemID, args.String()))
		item := fnItem(itemID, callID, "write_file", "completed", ptr(args.String()))
		b.WriteString(itemDone(oi, item))
		output = append(output, item)
	}
	b.WriteString(completed(output...))
	return b.Bytes()
}

func BenchmarkParse(b *testing.B) {
	streamtest.BenchParse(b, New(), benchStream())
}

// BenchmarkParseFixtures parses the real captures, small as they are, to
// show the per-stream overhead next to BenchmarkParse's bulk figure.
func BenchmarkParseFixtures(b *testing.B) {
	streamtest.BenchFixtures(b, func() modelstream.Parser { return New() }, fixtureDir, "openai_responses_", fixtures, fixtureFile)
}

// TestBenchStream keeps the benchmark honest: its stream must parse to four
// complete calls and be about 1 MB.
func TestBenchStream(t *testing.T) {
	data := benchStream()
	streamtest.CheckBenchStream(t, parse(t, bytes.NewReader(data)), 4)
	if len(data) < 1<<20 {
		t.Errorf("bench stream is %d bytes, want about 1 MB", len(data))
	}
}
