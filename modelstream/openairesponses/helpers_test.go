package openairesponses

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/modelstream"
)

// fixtureDir is where the shared captures live: the repository is cloned
// next to shared/, three levels above this package.
const fixtureDir = "../../../shared/fixtures/streams"

// fixturePattern selects this format's captures in fixtureDir.
const fixturePattern = "openai_responses_*"

// loadFixture returns a fixture's wire bytes, framing .chunks.jsonl lines as
// "data: <line>\n\n" the way their source's test harness does.
func loadFixture(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if os.IsNotExist(err) {
		t.Skipf("fixture %s not found (the shared fixtures folder is a sibling of the repository): %v", name, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(name, ".chunks.jsonl") {
		return raw
	}
	var b bytes.Buffer
	for line := range strings.Lines(string(raw)) {
		if line = strings.TrimRight(line, "\r\n"); line != "" {
			fmt.Fprintf(&b, "data: %s\n\n", line)
		}
	}
	return b.Bytes()
}

// result is everything a Handler heard from one Parse.
type result struct {
	Calls []modelstream.Call
	Ends  []modelstream.End
	// Order lists the reports as they came: "call <seq>" or "end".
	Order []string
}

func (r *result) Call(_ context.Context, c modelstream.Call) error {
	r.Calls = append(r.Calls, c)
	r.Order = append(r.Order, fmt.Sprintf("call %d", c.Seq))
	return nil
}

func (r *result) End(_ context.Context, e modelstream.End) error {
	r.Ends = append(r.Ends, e)
	r.Order = append(r.Order, "end")
	return nil
}

// parse runs the parser over r and checks the contract every stream must
// keep: no error, End exactly once and last, calls in Seq order, End.Calls
// counting them, and Complete exactly when there is an Input and no Err.
func parse(t testing.TB, r io.Reader) *result {
	t.Helper()
	var res result
	if err := New().Parse(context.Background(), r, &res); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	checkContract(t, &res)
	return &res
}

func checkContract(t testing.TB, res *result) {
	t.Helper()
	if len(res.Ends) != 1 {
		t.Fatalf("End reported %d times, want once (order %v)", len(res.Ends), res.Order)
	}
	if res.Order[len(res.Order)-1] != "end" {
		t.Fatalf("End is not the last report: %v", res.Order)
	}
	for i, c := range res.Calls {
		if c.Seq != i {
			t.Fatalf("call %d has Seq %d: calls out of order", i, c.Seq)
		}
		if c.Complete != (c.Input != nil) || c.Complete != (c.Err == "") {
			t.Fatalf("call %d: Complete %v with Input %q and Err %q", i, c.Complete, c.Input, c.Err)
		}
		if c.Complete && c.Name == "" {
			t.Fatalf("call %d is complete without a name", i)
		}
		if c.ID == "" {
			t.Fatalf("call %d has no ID", i)
		}
	}
	if res.Ends[0].Calls != len(res.Calls) {
		t.Fatalf("End.Calls = %d, but %d calls were reported", res.Ends[0].Calls, len(res.Calls))
	}
}

// frame builds a stream from events (bare payloads get "data: ...\n\n",
// anything starting with "event:", "data:" or ":" is used as is) and returns
// it with the offset just past each event.
func frame(events []string) ([]byte, []int64) {
	var b bytes.Buffer
	ends := make([]int64, len(events))
	for i, e := range events {
		switch {
		case strings.HasPrefix(e, "event:"), strings.HasPrefix(e, "data:"), strings.HasPrefix(e, ":"):
			b.WriteString(e)
		default:
			fmt.Fprintf(&b, "data: %s\n\n", e)
		}
		ends[i] = int64(b.Len())
	}
	return b.Bytes(), ends
}
