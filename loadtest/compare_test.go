package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestModeConfig(t *testing.T) {
	c, err := Config{Concurrency: 1, Duration: 1}.withDefaults()
	if err != nil || c.Mode != ModeStreaming {
		t.Errorf("default mode %q, %v", c.Mode, err)
	}
	_, err = Config{Concurrency: 1, Duration: 1, Mode: "later"}.withDefaults()
	if ce, ok := err.(*ConfigError); !ok || ce.Field != "mode" {
		t.Errorf("bad mode: %v", err)
	}
}

// The comparison's JSON is what scripts read: two reports and the ratio.
func TestComparisonShape(t *testing.T) {
	var buf bytes.Buffer
	if err := (&Comparison{Streaming: &Report{}, WaitForEnd: &Report{}, TurnRatio: 0.5, FirstResultRatio: 0.2}).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(buf.Bytes(), &g); err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	var rb bytes.Buffer
	_ = (&Report{}).WriteJSON(&rb)
	_ = json.Unmarshal(rb.Bytes(), &r)
	var want []string
	for _, top := range []string{"streaming", "wait_for_end"} {
		want = append(want, top)
		want = append(want, keys(top+".", r)...)
	}
	want = append(want, "turn_ratio")
	got := keys("", g)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("comparison keys\n got %v\nwant %v", got, want)
	}
}

func TestCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two 3 s loads")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := Config{Concurrency: 2, Duration: 3 * time.Second, CallsPerTurn: Range{3, 3}, SafeShare: 0.5,
		ServiceTime: 100 * time.Millisecond, StreamTime: 600 * time.Millisecond}
	cmp, err := Compare(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_ = cmp.WriteSummary(&buf)
	t.Logf("\n%s", buf.String())
	for name, r := range map[string]*Report{"streaming": cmp.Streaming, "wait-for-end": cmp.WaitForEnd} {
		if r.Turns == 0 || r.Failed() || r.Errors > 0 {
			t.Errorf("%s: %+v", name, *r)
		}
		// The turn clock starts at the stream's start in both modes.
		if r.Turn.P50 < 600 {
			t.Errorf("%s: turn p50 %.1f ms, under the stream time", name, r.Turn.P50)
		}
	}
	// Held calls start at the stream's end: a turn takes at least the
	// stream time plus a service time.
	if cmp.WaitForEnd.Turn.P50 < 700 || cmp.WaitForEnd.FirstResult.P50 < 700 {
		t.Errorf("wait-for-end turn p50 %.1f ms, first result p50 %.1f ms", cmp.WaitForEnd.Turn.P50, cmp.WaitForEnd.FirstResult.P50)
	}
	if cmp.TurnRatio <= 0 || cmp.TurnRatio >= 1 {
		t.Errorf("turn_ratio %.3f, want under 1", cmp.TurnRatio)
	}
	if cmp.FirstResultRatio <= 0 || cmp.FirstResultRatio >= 1 {
		t.Errorf("first result ratio %.3f, want under 1", cmp.FirstResultRatio)
	}
	if !strings.Contains(buf.String(), "turn_ratio") {
		t.Errorf("summary lacks the ratio:\n%s", buf.String())
	}
}
