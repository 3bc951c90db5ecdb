package loadtest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// keys lists the JSON object's keys, nested ones as parent.child.
func keys(prefix string, m map[string]any) []string {
	var out []string
	for k, v := range m {
		out = append(out, prefix+k)
		if sub, ok := v.(map[string]any); ok {
			out = append(out, keys(prefix+k+".", sub)...)
		}
	}
	sort.Strings(out)
	return out
}

// The report's field names are what scripts read: they must not drift.
func TestReportShape(t *testing.T) {
	want := `{"calls":1,"turns":1,"duration_s":1,"calls_per_s":1,"e2e_ms":{"p50":1,"p90":1,"p99":1,"p999":1,"max":1},"overhead_ms":{"p50":1,"p99":1},"first_result_ms":{"p50":1,"p99":1},"turn_ms":{"p50":1,"p99":1},"stage_msgs_per_call":1,"lost":0,"duplicates":0,"order_violations":0,"concurrency_violations":0,"rss_mib_max":1,"baseline":{"hop_ms":{"p50":1,"p99":1},"inproc_calls_per_s":1,"inproc_turn_ms":{"p50":1}}}`
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := (&Report{Errors: 3}).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(buf.Bytes(), &g); err != nil {
		t.Fatal(err)
	}
	if gk, wk := keys("", g), keys("", w); !reflect.DeepEqual(gk, wk) {
		t.Fatalf("report keys\n got %v\nwant %v", gk, wk)
	}
}

func TestSummaryRatio(t *testing.T) {
	r := &Report{Calls: 10, E2E: Spread{P50: 2}}
	var buf bytes.Buffer
	_ = r.WriteSummary(&buf)
	if strings.Contains(buf.String(), "baseline") {
		t.Errorf("summary without a baseline mentions it:\n%s", buf.String())
	}
	r.Baseline.Hop.P50 = 0.5
	buf.Reset()
	_ = r.WriteSummary(&buf)
	if !strings.Contains(buf.String(), "e2e p50 / hop p50 = 4.0") {
		t.Errorf("summary lacks the ratio:\n%s", buf.String())
	}
}

func TestConfigErrorsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		flag string
	}{
		{Config{Concurrency: 2, Rate: 5, Duration: 1}, "rate"},
		{Config{Concurrency: 1}, "duration"},
		{Config{Concurrency: 1, Duration: 1, SafeShare: 2}, "safe-share"},
		{Config{Concurrency: 1, Duration: 1, CallsPerTurn: Range{3, 2}}, "calls-per-turn"},
		{Config{Concurrency: 1, Duration: 1, ServiceTime: 10}, "service-time"},
		{Config{Concurrency: 1, Duration: 1, MaxConcurrency: -1}, "max-concurrency"},
	} {
		_, err := c.cfg.withDefaults()
		ce, ok := err.(*ConfigError)
		if !ok || ce.Field != c.flag {
			t.Errorf("%+v: got %v, want an error naming --%s", c.cfg, err, c.flag)
		}
	}
}

func TestParseRange(t *testing.T) {
	for in, want := range map[string]Range{"3": {3, 3}, "2-8": {2, 8}} {
		if got, err := ParseRange(in); err != nil || got != want {
			t.Errorf("ParseRange(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseRange("x"); err == nil {
		t.Error("ParseRange(x) succeeded")
	}
}
