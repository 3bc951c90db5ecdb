package chaos

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/toolwire/toolwire/schemas"
	"github.com/toolwire/toolwire/subjects"
)

// The --json file has exactly the keys the acceptance names, and nothing
// of the report's diagnostics.
func TestReportJSONShape(t *testing.T) {
	var b bytes.Buffer
	r := &Report{RSSMiBMax: map[string]float64{"router": 40}, Incomplete: []string{"x"}, Diagnosis: "y"}
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 14 {
		t.Errorf("%d keys, want the 14 of the acceptance (cmd/toolwire TestChaosShort names them)", len(m))
	}
	for _, diag := range []string{"Incomplete", "Diagnosis", "incomplete", "diagnosis"} {
		if _, ok := m[diag]; ok {
			t.Errorf("a diagnostic, %s, is in the JSON", diag)
		}
	}
	var rec bytes.Buffer
	if err := json.Compact(&rec, m["recovery_ms"]); err != nil || rec.String() != `{"p50":0,"p99":0,"max":0}` {
		t.Errorf("recovery_ms %s, want p50, p99 and max", m["recovery_ms"])
	}
}

// Every kind of malformed event is told apart from a good turn's dead
// letter: by its ce-id, or, with no CloudEvents headers, by its subject.
func TestMalformedFoundInTheirDeadLetters(t *testing.T) {
	sp := subjects.Default()
	for i := range 12 {
		m := malformed(sp, i, "turn_finished")
		dl := nats.Header{}
		for k, v := range schemas.EventHeaders(m.Header) {
			dl[k] = v
		}
		dl.Set(schemas.HeaderDLQSubject, m.Subject)
		if got := badIndex(dl); got != i {
			t.Errorf("event %d (%s): found as %d", i, badKind(i), got)
		}
	}
	good := nats.Header{}
	good.Set(schemas.HeaderDLQSubject, sp.In(subjects.DefaultTenant, "turn_good", subjects.KindUse))
	if got := badIndex(good); got != -1 {
		t.Errorf("a good turn's dead letter found as malformed event %d", got)
	}
}

func TestSummarize(t *testing.T) {
	s := summarize([]float64{5, 1, 4, 2, 3, 100})
	if s.P50 != 4 || s.Max != 100 || s.P99 != 100 {
		t.Errorf("summary %+v", s)
	}
	if (summarize(nil) != Summary{}) {
		t.Error("an empty summary is not zero")
	}
}

// The cluster's failover time is read from the nodes' own logs: the last
// leader election within the window after the kill.
func TestLastElection(t *testing.T) {
	dir := t.TempDir()
	kill := time.Date(2026, 12, 1, 21, 0, 0, 0, time.Local)
	lines := []string{
		"[1] 2026/12/01 20:59:59.000000 [INF] JetStream cluster new stream leader for '$G > TW_IN'",
		"[1] 2026/12/01 21:00:04.500000 [INF] JetStream cluster new consumer leader for '$G > TW_IN > router'",
		"[1] 2026/12/01 21:00:07.250000 [INF] JetStream cluster new stream leader for '$G > TW_OUT'",
		"[1] 2026/12/01 21:00:08.000000 [INF] Route connection created",
		"[1] 2026/12/01 21:05:00.000000 [INF] JetStream cluster new stream leader for '$G > TW_EXEC'",
	}
	p := newProc("toolwire", dir, "nats-1")
	if err := os.WriteFile(filepath.Join(dir, "nats-1.log"), []byte(joinLines(lines)), 0o644); err != nil {
		t.Fatal(err)
	}
	top := &topology{nodes: []*proc{p}}
	got := top.lastElection(kill, time.Minute)
	if want := kill.Add(7250 * time.Millisecond); !got.Equal(want) {
		t.Errorf("last election %v, want %v", got, want)
	}
}

func joinLines(l []string) string {
	var b bytes.Buffer
	for _, s := range l {
		b.WriteString(s + "\n")
	}
	return b.String()
}

// TestWaitedForEarlier: a parked call waits, after its takeover, for the
// calls before it that hold it back to run again on live workers; that
// wait (the union of their runs between the kill and its start) is taken
// out of its recovery. The dead worker's own run, before and past the
// kill, is not; overlapping runs count once; and a safe call is held back
// by the calls with side effects only (lease.CanStart).
func TestWaitedForEarlier(t *testing.T) {
	kill := time.Unix(1000, 0)
	at := func(ms int) time.Time { return kill.Add(time.Duration(ms) * time.Millisecond) }
	const pid = 41
	dead, live := "host"+workerTag(pid)+"a", "host-7-b"
	o := newObserver()
	call := func(seq int, safe bool, marks ...mark) {
		c := o.call(callKey{"t", seq})
		c.safe, c.marks = safe, marks
	}
	// The timeline of a chaos run's slowest recovery, calls with side
	// effects: call 0 was running on the dead worker and was run again;
	// calls 1 to 3 were parked.
	call(0, false, mark{at(-59), schemas.CallRunning, dead}, mark{at(1146), schemas.CallRunning, live}, mark{at(1292), schemas.CallDone, live})
	call(1, false, mark{at(-56), schemas.CallReady, ""}, mark{at(1298), schemas.CallRunning, live}, mark{at(1638), schemas.CallDone, live})
	call(2, false, mark{at(-61), schemas.CallReady, ""}, mark{at(1640), schemas.CallRunning, live}, mark{at(1769), schemas.CallDone, live})
	call(3, false, mark{at(-60), schemas.CallReady, ""}, mark{at(1769), schemas.CallRunning, live})
	if got, want := o.waitedForEarlier(callKey{"t", 3}, pid, kill, at(1769)), 615*time.Millisecond; got != want {
		t.Errorf("call 3 waited %s, want %s (146 + 340 + 129 ms)", got, want)
	}
	// Call 1 waited only for call 0's run again, not its dead run.
	if got, want := o.waitedForEarlier(callKey{"t", 1}, pid, kill, at(1298)), 146*time.Millisecond; got != want {
		t.Errorf("call 1 waited %s, want %s", got, want)
	}
	// Two earlier calls running together count once.
	call(0, false, mark{at(100), schemas.CallRunning, live}, mark{at(300), schemas.CallDone, live})
	call(1, false, mark{at(200), schemas.CallRunning, live}, mark{at(400), schemas.CallDone, live})
	if got, want := o.waitedForEarlier(callKey{"t", 2}, pid, kill, at(500)), 300*time.Millisecond; got != want {
		t.Errorf("waited %s under overlapping runs, want %s", got, want)
	}
	// Safe calls run beside each other: a safe call taken over late is
	// not excused by a safe call before it that was running meanwhile,
	// only by one with side effects.
	call(0, true, mark{at(0), schemas.CallRunning, live}, mark{at(1000), schemas.CallDone, live})
	call(1, false, mark{at(1000), schemas.CallRunning, live}, mark{at(1200), schemas.CallDone, live})
	call(2, true, mark{at(-10), schemas.CallRunning, dead}, mark{at(1500), schemas.CallRunning, live})
	if got, want := o.waitedForEarlier(callKey{"t", 2}, pid, kill, at(1500)), 200*time.Millisecond; got != want {
		t.Errorf("safe call waited %s, want %s (the call with side effects only)", got, want)
	}
}
