package hermes

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

// refBlock is a block as refScan finds it.
type refBlock struct {
	body   string
	at     int64
	closed bool
}

// refScan is the reference the incremental scanner is checked against: the
// same rules applied to the whole text at once with plain string searches.
func refScan(text string) ([]refBlock, string) {
	var blocks []refBlock
	st, pos, bodyStart := inText, 0, 0
	for {
		best, which := -1, ""
		for _, t := range tags[st] {
			if i := strings.Index(text[pos:], t); i >= 0 && (best < 0 || i < best) {
				best, which = i, t
			}
		}
		if best < 0 {
			break
		}
		tagStart, at := pos+best, pos+best+len(which)
		switch which {
		case tagCall:
			st, bodyStart = inCall, at
		case tagThink:
			st = inThink
		case tagThinkEnd:
			st = inText
		case tagCallEnd:
			blocks = append(blocks, refBlock{body: text[bodyStart:tagStart], at: int64(at), closed: true})
			st = inText
		case tagTurnEnd:
			if st == inCall {
				blocks = append(blocks, refBlock{body: text[bodyStart:tagStart], at: int64(at)})
			}
			return blocks, "im_end"
		}
		pos = at
	}
	if st == inCall {
		blocks = append(blocks, refBlock{body: text[bodyStart:], at: int64(len(text))})
	}
	return blocks, "eos"
}

func FuzzParse(f *testing.F) {
	streamtest.AddFixtureSeeds(f, fixtureDir, "hermes*")
	for _, s := range []string{
		"<think><tool_call>{}</tool_call></think><tool_call>{\"name\":\"f\"}</tool_call>",
		"<<tool_call>```json\n{\"arguments\":\"{\\\"a\\\":1}\",\"name\":\"g\"}\n```</tool_call><|im_end|>",
		"<tool_call>{\"name\":\"f\",\"arguments\":{\"s\":\"</tool\"}}<|im_e",
		"</think></tool_call><tool_call>[1]</tool_call><tool_call>{\"name\":\"h\",\"arguments\":[]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := parse(t, bytes.NewReader(data))
		blocks, stop := refScan(string(data))
		if len(want.Calls) != len(blocks) || want.Ends[0].StopReason != stop || want.Ends[0].Err != "" {
			t.Fatalf("got %d calls and End %+v; the reference finds %d blocks and stop %q",
				len(want.Calls), want.Ends[0], len(blocks), stop)
		}
		for i, c := range want.Calls {
			b := blocks[i]
			if c.RawInput != b.body || c.At != b.at || (c.Err == notClosedErr) == b.closed {
				t.Fatalf("call %d = %+v; the reference has body %q at %d, closed %v", i, c, b.body, b.at, b.closed)
			}
			if c.Complete {
				var obj map[string]any
				if err := json.Unmarshal(c.Input, &obj); err != nil || obj == nil {
					t.Fatalf("complete call %d has Input %q that is not a JSON object: %v", i, c.Input, err)
				}
				if c.Name == "" {
					t.Fatalf("complete call %d has no name", i)
				}
			}
			if !c.Complete && !strings.HasPrefix(c.Err, "tool call") {
				t.Fatalf("incomplete call %d has Err %q", i, c.Err)
			}
		}
		if got := parse(t, iotest.OneByteReader(bytes.NewReader(data))); !reflect.DeepEqual(got, want) {
			t.Fatalf("one byte at a time:\n got %+v\nwant %+v", got, want)
		}
		a, b := len(data)/3, 2*len(data)/3
		r := io.MultiReader(bytes.NewReader(data[:a]), bytes.NewReader(data[a:b]), bytes.NewReader(data[b:]))
		if got := parse(t, r); !reflect.DeepEqual(got, want) {
			t.Fatalf("in three reads:\n got %+v\nwant %+v", got, want)
		}
	})
}

// TestFuzzSeedsExist makes sure the fuzz seeds are not silently empty.
func TestFuzzSeedsExist(t *testing.T) {
	streamtest.CheckFuzzSeedsExist(t, fixtureDir, "hermes*", "hermes")
}
