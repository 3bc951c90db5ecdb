package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwire/toolwire/tool"
)

func TestMaxConcurrencyFromEnv(t *testing.T) {
	for _, tc := range []struct {
		val  string
		want int
		bad  bool
	}{
		{"", 0, false},
		{"1", 1, false},
		{"3", 3, false},
		{"250", 250, false},
		{"0", 0, false},
		{"-2", 0, true},
		{"abc", 0, true},
		{"2.5", 0, true},
		{" 4", 0, true},
		{"99999999999999999999999", 0, true},
	} {
		t.Run(fmt.Sprintf("%q", tc.val), func(t *testing.T) {
			t.Setenv(envMaxConcurrency, tc.val)
			got, err := maxConcurrency(0)
			if tc.bad {
				if err == nil {
					t.Fatalf("no error, got %d", got)
				}
				if !strings.Contains(err.Error(), "TOOLWIRE_MAX_TOOL_USE_CONCURRENCY") {
					t.Errorf("error %q does not name the variable", err)
				}
				if !strings.Contains(err.Error(), tc.val) {
					t.Errorf("error %q does not show the value", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
			// The flag wins over the environment.
			if got, err := maxConcurrency(5); err != nil || got != 5 {
				t.Errorf("--max-concurrency 5: got %d, %v", got, err)
			}
		})
	}
	if envMaxConcurrency != "TOOLWIRE_MAX_TOOL_USE_CONCURRENCY" {
		t.Errorf("variable is %s", envMaxConcurrency)
	}
}

// TestMaxConcurrencyFromEnvLimitsTurn: the environment's limit reaches the
// router of `toolwire run`, which holds a turn's safe calls to that many at
// once; a bad value stops the command before it runs anything, naming the
// variable.
func TestMaxConcurrencyFromEnvLimitsTurn(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "six.sse")
	calls := make([][2]string, 6)
	for i := range calls {
		calls[i] = [2]string{"Sleep", `{"ms":150,"safe":true}`}
	}
	if err := os.WriteFile(f, []byte(toolStream(calls...)), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--format", "anthropic", "--stream", f, "--test-tools", "--executors", "3", "--workdir", dir}

	t.Setenv(envMaxConcurrency, "two")
	if out, err := runCLI(t, args...); err == nil || !strings.Contains(err.Error(), envMaxConcurrency) || out != "" {
		t.Errorf("bad value: error %v, output %q", err, out)
	}

	t.Setenv(envMaxConcurrency, "2")
	out, err := runCLI(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	o := parseLines(t, out)
	if len(o.results) != 6 {
		t.Fatalf("%d results:\n%s", len(o.results), out)
	}
	peak := 0
	for _, a := range o.results {
		if a.IsError {
			t.Errorf("result %d: %s", a.Seq, a.Content)
		}
		start := stamp(t, a.StartedAt)
		n := 0
		for _, b := range o.results {
			if !stamp(t, b.StartedAt).After(start) && stamp(t, b.FinishedAt).After(start) {
				n++
			}
		}
		peak = max(peak, n)
	}
	if peak > 2 {
		t.Errorf("%d calls ran at once with %s=2", peak, envMaxConcurrency)
	}
	if peak < 2 {
		t.Logf("calls never overlapped (peak %d); loaded machine?", peak)
	}
}

func TestSearchModeFromEnv(t *testing.T) {
	t.Setenv(envToolSearch, " ")
	if m, err := searchModeFromEnv(); err != nil || m != nil {
		t.Errorf("blank: %+v %v", m, err)
	}
	t.Setenv(envToolSearch, "auto:30")
	if m, err := searchModeFromEnv(); err != nil || m == nil || *m != (tool.SearchMode{Kind: tool.SearchAuto, Percent: 30}) {
		t.Errorf("auto:30: %+v %v", m, err)
	}
	t.Setenv(envToolSearch, "sometimes")
	_, err := searchModeFromEnv()
	if err == nil || !strings.HasPrefix(err.Error(), "TOOLWIRE_TOOL_SEARCH: ") || !strings.Contains(err.Error(), `"sometimes"`) {
		t.Errorf("bad value: %v", err)
	}
}
