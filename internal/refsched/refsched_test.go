package refsched

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

func TestBatches(t *testing.T) {
	got := Batches([]bool{true, true, false, true, false, false, true})
	want := [][]int{{0, 1}, {2}, {3}, {4}, {5}, {6}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Batches = %v, want %v", got, want)
	}
}

func TestSimulateHandCases(t *testing.T) {
	t0 := time.Unix(0, 0)
	ms := time.Millisecond
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	cases := []struct {
		name  string
		calls []Call
		max   int
		start []time.Duration
	}{
		{"safe run together", []Call{{Safe: true, Duration: 10 * ms}, {Safe: true, Duration: 20 * ms}, {Safe: true, Duration: 5 * ms}}, 10, []time.Duration{0, 0, 0}},
		{"max limits the batch", []Call{{Safe: true, Duration: 10 * ms}, {Safe: true, Duration: 20 * ms}, {Safe: true, Duration: 5 * ms}}, 2, []time.Duration{0, 0, 10 * ms}},
		{"unsafe waits for all before", []Call{{Safe: true, Duration: 10 * ms}, {Safe: true, Duration: 20 * ms}, {Safe: false, Duration: 5 * ms}, {Safe: true, Duration: 1 * ms}}, 10, []time.Duration{0, 0, 20 * ms, 25 * ms}},
		{"safe never overtakes unsafe", []Call{{Safe: false, Duration: 10 * ms}, {Safe: true, Duration: 1 * ms}, {Safe: true, Duration: 1 * ms}}, 10, []time.Duration{0, 10 * ms, 10 * ms}},
		{"a rejection waits for every earlier call and holds back the later ones", []Call{{Safe: true, Duration: 30 * ms}, {Safe: true, Duration: 10 * ms}, {Rejected: true, Safe: true, Duration: 50 * ms}, {Safe: true, Duration: 1 * ms}}, 10, []time.Duration{0, 0, 30 * ms, 30 * ms}},
		{"later safe joins an earlier safe's batch", []Call{{Safe: true, Duration: 30 * ms}, {Safe: false, Duration: 5 * ms}, {Safe: true, Duration: 1 * ms}}, 10, []time.Duration{0, 30 * ms, 35 * ms}},
	}
	for _, c := range cases {
		spans := Simulate(c.calls, c.max, t0)
		for i, s := range spans {
			if !s.Start.Equal(at(c.start[i])) {
				t.Errorf("%s: call %d starts at %v, want %v", c.name, i, s.Start.Sub(t0), c.start[i])
			}
		}
		safe := make([]bool, len(c.calls))
		for i := range c.calls {
			safe[i] = c.calls[i].Safe && !c.calls[i].Rejected
		}
		if err := Check(safe, spans, c.max); err != nil {
			t.Errorf("%s: own schedule fails Check: %v", c.name, err)
		}
	}
}

func TestCheckCatchesViolations(t *testing.T) {
	t0 := time.Unix(0, 0)
	ms := time.Millisecond
	span := func(a, b int) Span { return Span{t0.Add(time.Duration(a) * ms), t0.Add(time.Duration(b) * ms)} }
	cases := []struct {
		name  string
		safe  []bool
		spans []Span
		max   int
	}{
		{"unsafe overlaps earlier", []bool{true, false}, []Span{span(0, 10), span(5, 15)}, 10},
		{"safe overtakes unsafe", []bool{false, true}, []Span{span(0, 10), span(5, 15)}, 10},
		{"over max", []bool{true, true, true}, []Span{span(0, 10), span(1, 10), span(2, 10)}, 2},
		{"ends before start", []bool{true}, []Span{span(10, 5)}, 1},
	}
	for _, c := range cases {
		if err := Check(c.safe, c.spans, c.max); !errors.Is(err, Violation) {
			t.Errorf("%s: Check = %v, want a violation", c.name, err)
		}
	}
	if err := Check([]bool{false, false}, []Span{span(0, 10), span(10, 20)}, 1); err != nil {
		t.Errorf("touching spans: %v", err)
	}
}

// Random schedules from Simulate always satisfy Check, and the rule is
// greedy: each call starts at the start or end of some other call.
func TestSimulateRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	t0 := time.Unix(0, 0)
	for range 2000 {
		n := 1 + r.IntN(20)
		calls := make([]Call, n)
		safe := make([]bool, n)
		for i := range calls {
			calls[i] = Call{Safe: r.IntN(3) > 0, Duration: time.Duration(1+r.IntN(50)) * time.Millisecond}
			safe[i] = calls[i].Safe
		}
		max := 1 + r.IntN(6)
		spans := Simulate(calls, max, t0)
		if err := Check(safe, spans, max); err != nil {
			t.Fatalf("calls %+v max %d: %v", calls, max, err)
		}
		for i, s := range spans {
			if s.Start.Equal(t0) {
				continue
			}
			found := false
			for j := range spans {
				if j != i && spans[j].End.Equal(s.Start) {
					found = true
				}
			}
			if !found {
				t.Fatalf("call %d starts at %v, at no other call's end: not greedy", i, s.Start.Sub(t0))
			}
		}
	}
}

func TestContextSeen(t *testing.T) {
	// batches: [0 1] [2] [3 4] [5]
	safe := []bool{true, true, false, true, true, false}
	changed := []bool{true, true, false, true, false, true}
	v, last := ContextSeen(safe, changed)
	wantV := []int{0, 0, 2, 2, 2, 3}
	wantL := []int{-1, -1, 1, 1, 1, 3}
	if !reflect.DeepEqual(v, wantV) || !reflect.DeepEqual(last, wantL) {
		t.Fatalf("ContextSeen = %v %v, want %v %v", v, last, wantV, wantL)
	}
}

func TestMustWaitFor(t *testing.T) {
	safe := []bool{true, true, true, false, true}
	if got, want := MustWaitFor(safe, 1), []bool{false, false, false, true, true}; !reflect.DeepEqual(got, want) {
		t.Errorf("safe f: %v, want %v", got, want)
	}
	if got, want := MustWaitFor(safe, 3), []bool{false, false, false, false, true}; !reflect.DeepEqual(got, want) {
		t.Errorf("unsafe f: %v, want %v", got, want)
	}
}

// TestReach: a failure reaches the other members of its batch and every
// later call, never a call before its batch — the order the model wrote.
func TestReach(t *testing.T) {
	safe := []bool{true, true, false, true, true, true, false, true}
	cases := []struct {
		f     int
		start int
		want  []bool
	}{
		{f: 4, start: 3, want: []bool{false, false, false, true, false, true, true, true}},
		{f: 2, start: 2, want: []bool{false, false, false, true, true, true, true, true}},
		{f: 0, start: 0, want: []bool{false, true, true, true, true, true, true, true}},
		{f: 6, start: 6, want: []bool{false, false, false, false, false, false, false, true}},
	}
	for _, c := range cases {
		if got := BatchStart(safe, c.f); got != c.start {
			t.Errorf("BatchStart(%d) = %d, want %d", c.f, got, c.start)
		}
		if got := Reach(safe, c.f); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Reach(%d) = %v, want %v", c.f, got, c.want)
		}
	}
}
