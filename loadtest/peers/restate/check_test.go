package main

import (
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	at := time.Now()
	d := func(seqs ...int) []delivery {
		var out []delivery
		for _, s := range seqs {
			out = append(out, delivery{seq: s, at: at})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		calls int
		got   []delivery
		want  verdict
	}{
		{"in order", 3, d(0, 1, 2), verdict{valid: 3}},
		{"none", 2, nil, verdict{lost: 2}},
		{"one missing", 3, d(0, 2), verdict{valid: 2, lost: 1, order: 1}},
		{"swapped", 3, d(1, 0, 2), verdict{valid: 3, order: 1}},
		{"duplicate", 2, d(0, 0, 1), verdict{valid: 2, duplicates: 1}},
		{"another turn's", 2, d(0, -1), verdict{valid: 1, lost: 1, foreign: 1}},
	} {
		if v := check(&turnObs{calls: tc.calls, start: at, deliveries: tc.got}); v != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, v, tc.want)
		}
	}
}

func TestConfigCheck(t *testing.T) {
	for _, c := range []Config{
		{Mode: "both", CallsPerTurn: 1, Duration: time.Second},
		{Concurrency: 2, Rate: 10, CallsPerTurn: 1, Duration: time.Second},
		{CallsPerTurn: 0, Duration: time.Second},
		{CallsPerTurn: 1},
		{CallRun: true, CallsPerTurn: 1, Duration: time.Second},
	} {
		if _, err := c.check(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	c, err := Config{CallsPerTurn: 1, Duration: time.Second}.check()
	if err != nil || c.Mode != ModeSideEffects || c.Concurrency != 1 || c.Drain != 30*time.Second {
		t.Errorf("defaults: %+v, %v", c, err)
	}
}
