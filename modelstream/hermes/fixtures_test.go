package hermes

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"testing"
	"time"

	"github.com/toolwire/toolwire/modelstream"
	"github.com/toolwire/toolwire/modelstream/internal/streamtest"
)

type wantCall struct {
	name, input string
}

type fixture struct {
	file  string
	calls []wantCall
	end   modelstream.End
}

func fixtureFile(fx fixture) string { return fx.file }

var fixtures = []fixture{
	{
		file: "hermes_qwen25_two_calls.txt",
		calls: []wantCall{
			{name: "get_current_temperature", input: `{"location":"San Francisco, CA, USA"}`},
			{name: "get_temperature_date", input: `{"location":"San Francisco, CA, USA","date":"2024-10-01"}`},
		},
		end: modelstream.End{Calls: 2, StopReason: "im_end"},
	},
	{
		file:  "hermes2pro_arguments_first.txt",
		calls: []wantCall{{name: "get_stock_fundamentals", input: `{"symbol":"TSLA"}`}},
		end:   modelstream.End{Calls: 1, StopReason: "im_end"},
	},
}

var idPattern = regexp.MustCompile(`^call_hermes_(\d+)_[0-9a-f]{16}$`)

// blocks finds, independently of the parser, each <tool_call> block of a
// fixture: its body and the offset just past its </tool_call>.
func blocks(t *testing.T, data []byte) (bodies []string, ends []int64) {
	t.Helper()
	for off := 0; ; {
		open := bytes.Index(data[off:], []byte("<tool_call>"))
		if open < 0 {
			return bodies, ends
		}
		start := off + open + len("<tool_call>")
		closing := bytes.Index(data[start:], []byte("</tool_call>"))
		if closing < 0 {
			t.Fatalf("unclosed block at byte %d", off+open)
		}
		bodies = append(bodies, string(data[start:start+closing]))
		off = start + closing + len("</tool_call>")
		ends = append(ends, int64(off))
	}
}

func TestFixtures(t *testing.T) {
	streamtest.EachFixture(t, fixtureDir, fixtures, fixtureFile, func(t *testing.T, fx fixture, data []byte) {
		bodies, ends := blocks(t, data)
		if len(bodies) != len(fx.calls) {
			t.Fatalf("the fixture has %d blocks, the table %d calls", len(bodies), len(fx.calls))
		}
		res := parse(t, bytes.NewReader(data))
		if len(res.Calls) != len(fx.calls) {
			t.Fatalf("got %d calls, want %d: %+v", len(res.Calls), len(fx.calls), res.Calls)
		}
		for i, w := range fx.calls {
			c := res.Calls[i]
			if c.Name != w.name || !c.Complete || string(c.Input) != w.input {
				t.Errorf("call %d = {Name %q Complete %v Input %s Err %q}, want {%q true %s}",
					i, c.Name, c.Complete, c.Input, c.Err, w.name, w.input)
			}
			if c.RawInput != bodies[i] {
				t.Errorf("call %d RawInput = %q, want the block %q", i, c.RawInput, bodies[i])
			}
			if c.At != ends[i] {
				t.Errorf("call %d At = %d, want %d (just past </tool_call>)", i, c.At, ends[i])
			}
			if m := idPattern.FindStringSubmatch(c.ID); m == nil || m[1] != fmt.Sprint(i) {
				t.Errorf("call %d ID = %q, want call_hermes_%d_<16 hex digits>", i, c.ID, i)
			}
		}
		if res.Ends[0] != fx.end {
			t.Errorf("End = %+v, want %+v", res.Ends[0], fx.end)
		}
	})
}

// TestFixturesRechunked feeds every fixture cut at every byte boundary, one
// byte at a time and in random sizes: the results must not change.
func TestFixturesRechunked(t *testing.T) {
	streamtest.EachFixture(t, fixtureDir, fixtures, fixtureFile, func(t *testing.T, _ fixture, data []byte) {
		check := streamtest.CheckRechunked(t, parse, data, streamtest.Feeds{Seed: 11, Rounds: 100, MaxRead: 16})
		for k := range len(data) + 1 {
			for j := k; j <= len(data); j += 7 {
				check(fmt.Sprintf("cut at bytes %d and %d", k, j),
					io.MultiReader(bytes.NewReader(data[:k]), bytes.NewReader(data[k:j]), bytes.NewReader(data[j:])))
			}
		}
	})
}

// TestCallReportedAtCloseTag writes a fixture through a pipe up to each
// </tool_call> and checks that the call is reported before any more text is
// written: the parser must not wait for more input.
func TestCallReportedAtCloseTag(t *testing.T) {
	data := loadFixture(t, "hermes_qwen25_two_calls.txt")
	_, ends := blocks(t, data)
	pr, pw := io.Pipe()
	calls := make(chan modelstream.Call, 4)
	h := modelstream.HandlerFuncs{
		OnCall: func(_ context.Context, c modelstream.Call) error { calls <- c; return nil },
	}
	done := make(chan error, 1)
	go func() { done <- New().Parse(context.Background(), pr, h) }()
	var off int64
	for _, end := range ends {
		if _, err := pw.Write(data[off:end]); err != nil {
			t.Fatal(err)
		}
		off = end
		select {
		case c := <-calls:
			if c.At != end || !c.Complete {
				t.Errorf("call %d At = %d Complete %v, want At %d and complete", c.Seq, c.At, c.Complete, end)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no call reported after the </tool_call> ending at byte %d", end)
		}
	}
	if _, err := pw.Write(data[off:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
